package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/local/localtest"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// superviseEnv makes the test binary a fleet run's supervisor: the local
// backend starts it with "--root ROOT NAME RUN", as the CLI's hidden
// `agent run-supervisor` command is started.
const superviseEnv = "CONSOLE_TEST_SUPERVISE"

// fleetWorld is a world whose workspace is a git repository (the local
// fleet makes a worktree per agent) with a local fleet whose agent CLI is
// the stub, hanging (STUB_MODE=hang) so a run stays busy until stopped.
func fleetWorld(t *testing.T) (*world, *local.Fleet) {
	t.Helper()
	return fleetWorldEnv(t, "STUB_MODE=hang")
}

// fleetWorldEnv is fleetWorld with the stub's environment env.
func fleetWorldEnv(t *testing.T, env ...string) (*world, *local.Fleet) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the local fleet needs git")
	}
	stub := agentstub.Build(t)
	var f *local.Fleet
	w := newWorld(t, worldOpts{git: true, opts: func(o *console.Options) {
		f = local.New(o.Workspace, localtest.Options(superviseEnv, stub, env...))
		o.Fleet = f
	}})
	fleettest.StopRunsAtCleanup(t, f)
	return w, f
}

// waitAgent polls the fleet (the service the CLI uses) until agent name has
// status want.
func waitAgent(t *testing.T, f *local.Fleet, name string, want fleet.Status) fleet.Agent {
	t.Helper()
	var last fleet.Agent
	poll.EventuallyNil(t, func() error {
		var err error
		if last, err = f.Show(context.Background(), name); err != nil {
			t.Fatalf("fleet show %s: %v", name, err)
		}
		if last.Status != want {
			return fmt.Errorf("agent %s never became %s in the fleet; it is %s (run %+v)", name, want, last.Status, last.CurrentRun)
		}
		return nil
	})
	return last
}

func TestBrowserFleetCreateStartStop(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w, f := fleetWorld(t)
	w.open(t, ctx, "/fleet")
	run(t, ctx, "the fleet page has no agents yet", visible(`[data-key="empty"]`))

	const card = `article.agent[data-key="papi"]`
	// The page shows the status it had when it last refreshed, starting or
	// busy; the fleet's watcher then brings busy.
	run(t, ctx, "create papi with the New agent form",
		chromedp.SendKeys(chromedp.CSS(`#c-name`), "papi"),
		chromedp.SendKeys(chromedp.CSS(`#c-spec`), "keep the API tests green"),
		click(`#create-h + form button[type="submit"]`),
		visible(card+` h3 .st-busy, `+card+` h3 .st-starting`))
	// A refresh may have caught the run before its task was recorded.
	waitText(t, ctx, card+` .current`, "keep the API tests green")
	a := waitAgent(t, f, "papi", fleet.StatusBusy)
	run(t, ctx, "papi shows busy without a reload", visible(card+` h3 .st-busy`))
	if a.CurrentRun == nil || a.CurrentRun.Summary != "keep the API tests green" || a.Spec != "keep the API tests green" {
		t.Fatalf("the fleet has papi with spec %q, run %+v", a.Spec, a.CurrentRun)
	}
	specRun := a.CurrentRun.ID

	stop := func(what string) {
		t.Helper()
		clickUntil(t, ctx, what, card+` form[action="/fleet/papi/stop"] button`, card+` .st-idle`)
		if got := textOf(t, ctx, card+` .current`); !strings.Contains(got, "No current task") {
			t.Fatalf("after the stop papi's current task reads %q", got)
		}
		if a := waitAgent(t, f, "papi", fleet.StatusIdle); a.CurrentRun != nil {
			t.Fatalf("the fleet's idle papi has a current run %+v", a.CurrentRun)
		}
	}
	stop("stop the spec's run")

	steady(t, ctx, "start papi on free text",
		chromedp.SendKeys(chromedp.CSS(`#t-papi`), "add a test for the parser"),
		click(card+` form.start button[type="submit"]`),
		visible(card+` h3 .st-busy, `+card+` h3 .st-starting`))
	// A refresh may have caught the run before its task was recorded.
	waitText(t, ctx, card+` .current`, "add a test for the parser")
	a = waitAgent(t, f, "papi", fleet.StatusBusy)
	if a.CurrentRun == nil || a.CurrentRun.Summary != "add a test for the parser" || a.CurrentRun.TaskID != "" {
		t.Fatalf("the fleet's busy papi runs %+v", a.CurrentRun)
	}
	textRun := a.CurrentRun.ID
	stop("stop the free-text run")

	steady(t, ctx, "start papi on matrix task a1b2c3",
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

// TestBrowserFleetFollowsAnotherProcessLive: what another process does to
// the fleet (here a second Fleet with a bus of its own, as another
// `agentinfra agent start` has, and the detached supervisor that runs the
// agent CLI) reaches the open fleet page without a reload, through the
// fleet's watcher: the new agent, busy on its spec with it as its current
// task, idle when the run ends, busy again on a free-text start, idle again.
func TestBrowserFleetFollowsAnotherProcessLive(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	gate := filepath.Join(t.TempDir(), "gate") // the stub's run ends once it exists
	w, f := fleetWorldEnv(t, "STUB_MODE=ok", "STUB_GATE="+gate)
	other := local.New(w.ws, func() local.Options {
		o := localtest.Options(superviseEnv, agentstub.Build(t), "STUB_MODE=ok", "STUB_GATE="+gate)
		o.Bus = events.New() // nothing it publishes reaches the console's bus
		return o
	}())
	fleettest.StopRunsAtCleanup(t, other)
	w.open(t, ctx, "/fleet")
	run(t, ctx, "the fleet page has no agents yet", visible(`[data-key="empty"]`))
	// A reload would lose this mark.
	evalJS[bool](t, ctx, `window.__notReloaded = true`)

	const card = `article.agent[data-key="papi"]`
	bg := context.Background()
	if _, err := other.Create(bg, fleet.CreateInput{Name: "papi", Spec: "keep the API tests green", Source: fleet.SourceHuman}); err != nil {
		t.Fatal(err)
	}
	// starting → busy: the supervisor records the CLI's process in the
	// run's record, which only the watcher sees.
	run(t, ctx, "papi appears busy on its spec", visible(card+` h3 .st-busy`))
	waitText(t, ctx, card+` .current`, "keep the API tests green")
	if a := waitAgent(t, f, "papi", fleet.StatusBusy); a.CurrentRun == nil {
		t.Fatal("the fleet has papi busy with no current run")
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "papi turns idle when its run ends", visible(card+` h3 .st-idle`))
	waitText(t, ctx, card+` .current`, "No current task")

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Start(bg, fleet.StartInput{Name: "papi", Text: "add a test for the parser", Source: fleet.SourceHuman}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "papi is busy again on the free text", visible(card+` h3 .st-busy`))
	waitText(t, ctx, card+` .current`, "add a test for the parser")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "papi is idle again", visible(card+` h3 .st-idle`))
	waitText(t, ctx, card+` .current`, "No current task")
	if !evalJS[bool](t, ctx, `window.__notReloaded === true`) {
		t.Fatal("the page was reloaded: the updates must come live")
	}
	h, err := f.History(bg, "papi", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount != 2 || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[1].Status != fleet.RunCompleted {
		t.Fatalf("papi's history %+v, want two completed runs", h)
	}
}

// waitText waits until the element sel's text contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	poll.EventuallyNil(t, func() error {
		if got := textOf(t, ctx, sel); !strings.Contains(got, want) {
			return fmt.Errorf("%s reads %q, never %q", sel, got, want)
		}
		return nil
	})
}
