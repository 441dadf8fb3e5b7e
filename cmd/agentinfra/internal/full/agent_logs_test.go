package full

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
)

// The real gemini, run by the real supervisor (`agentinfra agent
// run-supervisor`), against the scripted fake: the model has gemini's shell
// tool run a command, then thinks until the test lets it answer. `agent
// logs --follow`, started while the run goes on, prints the tool call and
// its result while the model is still thinking (the run is live), then
// the run's end, and exits; `agent logs` and `agent logs --json` show the
// same log once the run ended.
func TestCLIAgentLogsOfARealGemini(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	released := false
	fake := fakemodel.NewGeminiScript(t, func(a fakemodel.Ask) fakemodel.Answer {
		switch {
		case !a.ToolCall && strings.Contains(a.User, "MARK-LOGS"):
			return fakemodel.Answer{Shell: "echo tool-said-hello"}
		case a.ToolCall:
			<-release
			return fakemodel.Answer{Text: "all done MARK-END"}
		}
		return fakemodel.Answer{Text: "ok"}
	})
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	g := fakemodel.Gemini(t, fake.URL)
	c := newFleetCLI(t)
	c.env = append(append([]string{}, g.Env...), runner.EnvTools+"="+e2etools.Dir())
	e2etools.Bin(t, "gemini") // skips (or fails under AGENTINFRA_E2E=1) without it

	if code, _, errOut := c.run("agent", "create", "papi", "--spec", "MARK-LOGS say hello"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	follow := exec.Command(c.bin, "agent", "logs", "papi", "--follow")
	follow.Dir, follow.Env = c.repo, append(os.Environ(), c.env...)
	out, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	follow.Stderr = os.Stderr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Process.Kill(); follow.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	next := func(want string) string {
		t.Helper()
		deadline := time.After(fakemodel.Timeout)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("agent logs --follow ended before %q; it printed:\n%s", want, strings.Join(got, "\n"))
				}
				got = append(got, l)
				if strings.Contains(l, want) {
					return l
				}
			case <-deadline:
				t.Fatalf("agent logs --follow never printed %q; it printed:\n%s", want, strings.Join(got, "\n"))
			}
		}
	}
	next("▶ run started")
	if l := next("tool_use run_shell_command"); !strings.Contains(l, "echo tool-said-hello") {
		t.Errorf("the tool call line lacks the command: %q", l)
	}
	if l := next("tool_result"); !strings.Contains(l, "success") || !strings.Contains(l, "tool-said-hello") {
		t.Errorf("the tool result line lacks the command's output: %q", l)
	}
	// The model has not answered yet: the run is live, and --follow showed
	// the tool's result already.
	if a := c.waitStatus("papi", "busy"); a.Agent.CurrentRun == nil {
		t.Fatal("no current run while the model thinks")
	}
	close(release)
	released = true
	next("MARK-END")
	next("■ run ended")
	if err := follow.Wait(); err != nil {
		t.Fatalf("agent logs --follow after the run ended: %v", err)
	}
	c.waitStatus("papi", "idle")

	code, text, errOut := c.run("agent", "logs", "papi")
	t.Logf("agent logs papi:\n%s", text)
	if code != 0 || !strings.Contains(text, "(completed)") || !strings.Contains(text, "tool_use run_shell_command: {") ||
		!strings.Contains(text, "tool-said-hello") || !strings.Contains(text, "■ run ended: exit code 0") {
		t.Fatalf("agent logs: exit %d\n%s\n%s", code, text, errOut)
	}
	var res struct {
		Run        struct{ ID, Status string }
		Items      []events.RunItem
		TotalCount int `json:"total_count"`
		Live       bool
	}
	c.json(&res, "agent", "logs", "papi", "--run", "papi-1")
	var kinds []string
	for _, it := range res.Items {
		kinds = append(kinds, it.Kind)
	}
	k := strings.Join(kinds, ",")
	if res.Run.ID != "papi-1" || res.Live || res.TotalCount != len(res.Items) || !strings.HasPrefix(k, "run_started,init,") ||
		!strings.Contains(k, "tool_use,tool_result,") || !strings.HasSuffix(k, "result,run_ended") {
		t.Fatalf("agent logs --json: %+v (kinds %s)", res, k)
	}
	if code, _, errOut := c.run("agent", "logs", "papi", "--run", "papi-9"); code != 3 || !strings.Contains(errOut, `no run "papi-9"`) { // not found
		t.Errorf("an unknown run: exit %d, %s", code, errOut)
	}
}
