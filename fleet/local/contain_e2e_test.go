package local

// Contained runs with the REAL agent CLIs against the scripted fake model
// servers: the model asks the CLI's own shell tool to run `sleep 120.N` in
// a session of its own (setsid -f; gemini runs every shell command in a new
// session anyway), then thinks until the test ends. Stopping the run,
// deleting the agent, or killing its supervisor with SIGKILL leaves no
// process with that command.
//
// By default each CLI is ended one way (gemini: kill -9 of the supervisor,
// claude: delete, codex: stop), so every CLI and every ending is covered;
// AGENTINFRA_E2E=1 runs all nine pairs.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

var sleepN atomic.Int64

// containedCLI prepares one real CLI, its scripted fake and the fleet's
// configuration for it.
type containedCLI struct {
	name    string
	fake    func(testing.TB, fakemodel.Script) *fakemodel.Server
	prepare func(t *testing.T, url string) (fakemodel.CLI, string)
	ending  string // the ending run by default
}

var containedCLIs = []containedCLI{
	{"gemini", fakemodel.NewGeminiScript, func(t *testing.T, url string) (fakemodel.CLI, string) {
		return fakemodel.Gemini(t, url), ""
	}, "kill -9 of the supervisor"},
	{"claude", fakemodel.NewClaudeScript, func(t *testing.T, url string) (fakemodel.CLI, string) {
		// claude refuses bypassPermissions as root: auto_edit, with Bash
		// allowed in the user settings, works for anyone.
		c := fakemodel.Claude(t, url)
		fakemodel.WriteFile(t, filepath.Join(c.Home, ".claude", "settings.json"), `{"permissions":{"allow":["Bash"]}}`)
		return c, "fleet:\n  approval_mode: auto_edit\n"
	}, "delete"},
	{"codex", fakemodel.NewCodexScript, func(t *testing.T, url string) (fakemodel.CLI, string) {
		c := fakemodel.Codex(t, url)
		writeCodexProvider(t, c, url)
		return c, ""
	}, "stop"},
}

// writeCodexProvider puts the fake provider in codex's config.toml (the
// fleet passes the CLI no extra arguments).
func writeCodexProvider(t *testing.T, c fakemodel.CLI, url string) {
	fakemodel.WriteFile(t, filepath.Join(c.Home, ".codex", "config.toml"), fmt.Sprintf(`check_for_update_on_startup = false
model_provider = "fake"
model = "gpt-fake"
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`, url+"/v1"))
}

func TestRealCLIRunsLeaveNoProcess(t *testing.T) {
	all := os.Getenv("AGENTINFRA_E2E") == "1"
	for _, c := range containedCLIs {
		for _, e := range endings {
			if !all && e.name != c.ending {
				continue
			}
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				checkContained(t, c, e.end)
			})
		}
	}
}

func checkContained(t *testing.T, c containedCLI, end func(*testing.T, *Fleet, string)) {
	// A command no other test runs: sleep 120.N.
	secs := fmt.Sprintf("120.%d%d", os.Getpid()%1000, sleepN.Add(1))
	sleep := []string{"sleep", secs}
	release := make(chan struct{})
	var once sync.Once
	fake := c.fake(t, func(a fakemodel.Ask) fakemodel.Answer {
		switch {
		case !a.ToolCall && strings.Contains(a.User, "MARK-CONTAIN"):
			// The tool call stays open after the detach, so the detached sleep
			// is seen even where the CLI's sandbox ends its children with the
			// call (codex).
			return fakemodel.Answer{Shell: "setsid -f sleep " + secs + " >/dev/null 2>&1 </dev/null; sleep 30"}
		case a.ToolCall:
			<-release // the model thinks until the test is over: the run stays busy
		}
		return fakemodel.Answer{Text: "done"}
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the fake closes
	cli, config := c.prepare(t, fake.URL)
	f := realCLIFleet(t, cli)
	if config != "" {
		fakemodel.WriteFile(t, filepath.Join(f.ws.AgentDir(), "config.yaml"), config)
	}
	if _, err := f.Create(t.Context(), fleet.CreateInput{Name: "papi", CLI: c.name, Spec: "MARK-CONTAIN start the server"}); err != nil {
		t.Fatal(err)
	}
	var pids []int
	if !poll.Until(fakemodel.Timeout, func() bool { pids = processesWith(sleep...); return len(pids) > 0 }) {
		a, _ := f.Show(t.Context(), "papi")
		var log strings.Builder
		if h, err := f.History(t.Context(), "papi", 1, 1); err == nil && len(h.Tasks) > 0 {
			res, _ := f.Logs(t.Context(), "papi", h.Tasks[0].ID, 0)
			for _, it := range res.Items {
				fmt.Fprintf(&log, "%s %s %.300s\n", it.Kind, it.Tool, it.Text)
			}
			fmt.Fprintf(&log, "run: %+v\n", h.Tasks[0])
		}
		t.Fatalf("the real %s never ran %q (agent %s); its log:\n%s", c.name, strings.Join(sleep, " "), a.Status, log.String())
	}
	var rec runRecord
	statefile.ReadJSON(f.p.file("papi", runFile), &rec)
	if !hasMarker(pids[0], rec.Scope) {
		t.Errorf("%s's sleep (pid %d) does not carry the run's marker", c.name, pids[0])
	}
	if a, _ := f.Show(t.Context(), "papi"); a.Status != fleet.StatusBusy {
		t.Fatalf("while the model thinks the agent is %s, want busy", a.Status)
	}
	end(t, f, "papi")
	waitNoProcess(t, sleep...)
}
