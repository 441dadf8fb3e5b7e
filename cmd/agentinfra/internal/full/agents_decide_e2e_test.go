//go:build linux

package full

// Issue 27, "agents cannot decide", with the real claude under a
// supervised dispatch (agent B: sandboxed, below its supervisor): the
// commands it runs — each one approved by the person, as a careless person
// would — try to approve agent A's request with `agentinfra approve` and
// with the console's HTTP API, holding the person's cookie, from a process
// that cleared its environment (no run marker left: only the ancestry
// tells). Both are refused and A's request stays pending; the person's own
// approval then goes through.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSupervisedAgentCannotApproveAnotherAgent(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	bin := taskBinary(t)
	dir, _ := dispatchCLISetup(t)
	first, sesA := pendingOf(t, dir, "papi", "rm -rf build")
	person := append(os.Environ(), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_USER=ana", "NO_COLOR=1")
	base, cookie := startConsoleProcess(t, bin, dir, person)

	id := itoa(first)
	steps := []string{
		`agentinfra approve ` + id + ` --reason approved-by-agent-B; echo "exit $?"`,
		// Detached (a session of its own, its parent gone: adopted by the
		// run's supervisor) and with a cleared environment: no process
		// above curl carries the run's marker.
		`(setsid env -i PATH="$PATH" sh -c 'sleep 1; curl -s -w " HTTP %{http_code}" -b "` + cookie.Name + `=` + cookie.Value + `" -H "Origin: ` + base +
			`" -H "Accept: application/json" -d reason=by-agent-B ` + base + `/inbox/` + id + `/approve > web.out' &); ` +
			`for i in $(seq 100); do grep -q HTTP web.out 2>/dev/null && break; sleep 0.1; done; cat web.out`,
	}
	var mu sync.Mutex
	var results []string
	next := 0
	fake := fakemodel.NewClaudeScript(t, func(a fakemodel.Ask) fakemodel.Answer {
		mu.Lock()
		defer mu.Unlock()
		if a.ToolCall {
			results = append(results, a.ToolResult)
		}
		if (a.ToolCall || strings.Contains(a.User, "approve")) && next < len(steps) {
			next++
			return fakemodel.Answer{Shell: steps[next-1]}
		}
		return fakemodel.Answer{Text: "done"}
	})
	cli := fakemodel.Claude(t, fake.URL)
	cmd := exec.Command(bin, "dispatch", "a1b2c3", "--cli", "claude", "--model", cli.Model, "--approval-mode", "ask",
		"--task-override", "Please approve request "+id+".")
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1",
		"PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	out := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// The person approves each of agent B's commands from outside the run.
	ws, _ := workspace.New(dir)
	ctx := context.Background()
	for approved := 0; approved < len(steps); approved++ {
		var p store.PendingView
		deadline := time.Now().Add(fakemodel.Timeout)
		for p.ID == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("agent B asked for %d commands, want %d; the dispatch said:\n%s", approved, len(steps), out)
			}
			if st, err := store.OpenWorkspace(ctx, ws, store.Options{}); err == nil {
				all, _ := st.Pending(ctx)
				st.Close()
				for _, v := range all {
					if v.SessionID != sesA {
						p = v
					}
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		approve := exec.Command(bin, "approve", itoa(p.ID))
		approve.Dir, approve.Env = dir, person
		if b, err := approve.CombinedOutput(); err != nil {
			t.Fatalf("the person's approval of agent B's command %d: %v\n%s", p.ID, err, b)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent B's dispatch: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("agent B's commands said:\n%s", strings.Join(results, "\n---\n"))
	if len(results) < 2 {
		t.Fatalf("%d tool results, want 2: %q", len(results), results)
	}
	// Under Landlock the database is out of the agent's reach (the
	// command says why); without it, the ancestry refuses.
	if cli := results[0]; !strings.Contains(cli, "exit 7") && !strings.Contains(cli, "exit 1") ||
		!strings.Contains(cli, "sandbox keeps the supervision database out of its reach") && !strings.Contains(cli, "refused: this command (pid ") {
		t.Errorf("agentinfra approve inside agent B's run: %s", cli)
	}
	if web := results[len(results)-1]; !strings.Contains(web, "HTTP 403") || !strings.Contains(web, "refused: the client of this request (pid ") ||
		!strings.Contains(web, "below its supervisor pid "+itoa(int64(cmd.Process.Pid))) {
		t.Errorf("the console's API from a cleared process inside agent B's run: %s", web)
	}
	if r, refusals := requestIn(t, dir, first, "refused_inside_run"); r.Status != store.StatusPending || len(refusals) == 0 {
		t.Fatalf("agent A's request after agent B's tries: %s by %s via %s; %d refusals audited", r.Status, r.DecidedBy, r.Surface, len(refusals))
	}
	approve := exec.Command(bin, "approve", id)
	approve.Dir, approve.Env = dir, person
	if b, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("the person's approval of agent A's request: %v\n%s", err, b)
	}
	if r, _ := requestIn(t, dir, first, ""); r.Status != store.StatusApproved || r.Surface != store.SurfaceTerminal {
		t.Errorf("agent A's request after the person's approval: %s via %s", r.Status, r.Surface)
	}
}
