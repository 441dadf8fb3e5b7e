package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/workspace"
	"github.com/chromedp/chromedp"
)

// superviseEnv makes the test binary a fleet run's supervisor: the local
// backend starts it with "--root ROOT NAME RUN", as the CLI's hidden
// `agent supervise` command is started.
const superviseEnv = "CONSOLE_TEST_SUPERVISE"

func superviseMain(args []string) int {
	if len(args) != 4 || args[0] != "--root" {
		fmt.Fprintln(os.Stderr, "usage: --root ROOT NAME RUN")
		return 2
	}
	ws, err := workspace.New(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := fleet.Supervise(ctx, ws, args[2], args[3], fleet.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fleetWorld is a world whose workspace is a git repository (the local
// fleet makes a worktree per agent) with a local fleet whose agent CLI is
// the stub, hanging (STUB_MODE=hang) so a run stays busy until stopped.
func fleetWorld(t *testing.T) (*world, *fleet.Fleet) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the local fleet needs git")
	}
	stub := agentstub.Build(t)
	var f *fleet.Fleet
	w := newWorld(t, worldOpts{git: true, opts: func(o *console.Options) {
		f = fleet.New(o.Workspace, fleet.Options{
			SupervisorArgv: []string{os.Args[0]},
			SupervisorEnv:  []string{superviseEnv + "=1"},
			Binary:         stub,
			Env:            []string{"STUB_MODE=hang"},
			KillGrace:      300 * time.Millisecond,
			StopGrace:      300 * time.Millisecond,
		})
		o.Fleet = f
	}})
	fleettest.StopRunsAtCleanup(t, f)
	return w, f
}

// waitAgent polls the fleet (the service the CLI uses) until agent name has
// status want.
func waitAgent(t *testing.T, f *fleet.Fleet, name string, want fleet.Status) fleet.Agent {
	t.Helper()
	var last fleet.Agent
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		a, err := f.Show(context.Background(), name)
		if err != nil {
			t.Fatalf("fleet show %s: %v", name, err)
		}
		if a.Status == want {
			return a
		}
		last = a
	}
	t.Fatalf("agent %s never became %s in the fleet; it is %s (run %+v)", name, want, last.Status, last.CurrentRun)
	return last
}

func TestBrowserFleetCreateStartStop(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w, f := fleetWorld(t)
	w.open(t, ctx, "/fleet")
	run(t, ctx, "the fleet page has no agents yet", visible(`[data-key="empty"]`))

	const card = `article.agent[data-key="papi"]`
	// The page shows the status it had when it refreshed after the click:
	// starting or busy (the fleet's watcher did not bring starting -> busy
	// to the open page in this test; the fleet itself is checked for busy).
	run(t, ctx, "create papi with the New agent form",
		chromedp.SendKeys(chromedp.CSS(`#c-name`), "papi"),
		chromedp.SendKeys(chromedp.CSS(`#c-spec`), "keep the API tests green"),
		click(`#create-h + form button[type="submit"]`),
		visible(card+` h3 .st-busy, `+card+` h3 .st-starting`))
	if got := textOf(t, ctx, card+` .current`); !strings.Contains(got, "keep the API tests green") {
		t.Fatalf("the new agent's current task reads %q, want its spec", got)
	}
	a := waitAgent(t, f, "papi", fleet.StatusBusy)
	if a.CurrentRun == nil || a.CurrentRun.Summary != "keep the API tests green" || a.Spec != "keep the API tests green" {
		t.Fatalf("the fleet has papi with spec %q, run %+v", a.Spec, a.CurrentRun)
	}
	specRun := a.CurrentRun.ID

	stop := func(what string) {
		t.Helper()
		run(t, ctx, what, click(card+` form[action="/fleet/papi/stop"] button`), visible(card+` .st-idle`))
		if got := textOf(t, ctx, card+` .current`); !strings.Contains(got, "No current task") {
			t.Fatalf("after the stop papi's current task reads %q", got)
		}
		if a := waitAgent(t, f, "papi", fleet.StatusIdle); a.CurrentRun != nil {
			t.Fatalf("the fleet's idle papi has a current run %+v", a.CurrentRun)
		}
	}
	stop("stop the spec's run")

	run(t, ctx, "start papi on free text",
		chromedp.SendKeys(chromedp.CSS(`#t-papi`), "add a test for the parser"),
		click(card+` form.start button[type="submit"]`),
		visible(card+` h3 .st-busy, `+card+` h3 .st-starting`))
	if got := textOf(t, ctx, card+` .current`); !strings.Contains(got, "add a test for the parser") {
		t.Fatalf("papi's current task reads %q, want the free text", got)
	}
	a = waitAgent(t, f, "papi", fleet.StatusBusy)
	if a.CurrentRun == nil || a.CurrentRun.Summary != "add a test for the parser" || a.CurrentRun.TaskID != "" {
		t.Fatalf("the fleet's busy papi runs %+v", a.CurrentRun)
	}
	textRun := a.CurrentRun.ID
	stop("stop the free-text run")

	run(t, ctx, "start papi on matrix task a1b2c3",
		click(card+` input[name="kind"][value="task"]`),
		chromedp.SetValue(chromedp.CSS(`#k-papi`), "a1b2c3"),
		click(card+` form.start button[type="submit"]`),
		visible(card+` h3 .st-busy, `+card+` h3 .st-starting`),
		visible(card+` .current a[href="/board/task/a1b2c3"]`))
	a = waitAgent(t, f, "papi", fleet.StatusBusy)
	if a.CurrentRun == nil || a.CurrentRun.TaskID != "a1b2c3" {
		t.Fatalf("the fleet's busy papi runs %+v, want matrix task a1b2c3", a.CurrentRun)
	}
	taskRun := a.CurrentRun.ID
	stop("stop the matrix task's run")

	h, err := f.History(context.Background(), "papi", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount != 3 || h.Tasks[0].ID != taskRun || h.Tasks[1].ID != textRun || h.Tasks[2].ID != specRun {
		t.Fatalf("papi's history %+v, want the spec's, the text's and the task's runs", h)
	}
	for _, r := range h.Tasks {
		if r.Status != fleet.RunStopped {
			t.Errorf("run %s ended %s, want stopped", r.ID, r.Status)
		}
	}
}
