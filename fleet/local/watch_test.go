package local

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
)

// What any process does to the fleet reaches a watcher's bus: an agent
// created by another Fleet (as another CLI process would), its runs
// starting and ending under their supervisors, a supervisor killed with
// SIGKILL (no file changes: its liveness is checked), the agent deleted.
func TestWatchPublishesTheFleetsChanges(t *testing.T) {
	ws := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := testFleet(t, ws, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile)
	bus := events.New()
	sub := bus.Subscribe(events.Filter{Root: ws.Root, Agent: "papi"}, 0)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watching := New(ws, Options{}) // the watcher's own view, as another process has
	go watching.Watch(ctx, bus, 100*time.Millisecond)
	time.Sleep(100 * time.Millisecond)

	next := func(kind events.Kind) events.Event {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		var seen []string
		for {
			e, ok := sub.Next(wctx)
			if !ok {
				t.Fatalf("no %s event; saw %v", kind, seen)
			}
			if e.Source != "watch" || e.Root != ws.Root {
				t.Fatalf("event %+v: not from the watcher", e)
			}
			if e.Kind == kind {
				return e
			}
			seen = append(seen, string(e.Kind)+" "+e.RunID)
		}
	}
	if _, err := f.Create(context.Background(), fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	next(events.AgentCreated)
	started := next(events.RunStarted)
	if started.RunID != "papi-1" {
		t.Errorf("run started = %+v", started)
	}
	waitStatus(t, f, "papi", fleet.StatusBusy)
	readPid(t, pidFile)
	var rec runRecord
	statefile.ReadJSON(f.p.file("papi", runFile), &rec)
	time.Sleep(300 * time.Millisecond) // the watcher has seen the run as it is
	for {
		if _, ok := sub.TryNext(); !ok {
			break
		}
	}
	if err := syscall.Kill(rec.Supervisor.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, rec.Supervisor.PID)
	// Nothing wrote a file: the watcher sees the supervisor die.
	if e := next(events.AgentChanged); e.RunID != "papi-1" {
		t.Errorf("agent changed = %+v", e)
	}
	if _, err := f.Show(context.Background(), "papi"); err != nil { // records the interrupted run
		t.Fatal(err)
	}
	if e := next(events.RunEnded); e.RunID != "papi-1" {
		t.Errorf("run ended = %+v", e)
	}
	if _, err := f.Delete(context.Background(), "papi", true); err != nil {
		t.Fatal(err)
	}
	next(events.AgentDeleted)
}

// A run's record changing under the same run (its supervisor recorded the
// CLI's process: starting → busy; a stop was asked) is an AgentChanged, so
// that a page showing the agent's status re-reads it.
func TestDiffFleetSeesTheCurrentRunsRecordChange(t *testing.T) {
	before := map[string]agentState{"papi": {record: "1", run: "papi-1", runRec: "10|1", alive: true}}
	after := map[string]agentState{"papi": {record: "1", run: "papi-1", runRec: "12|2", alive: true}}
	got := diffFleet(before, after)
	if len(got) != 1 || got[0].Kind != events.AgentChanged || got[0].Agent != "papi" || got[0].RunID != "papi-1" {
		t.Fatalf("events = %+v, want one AgentChanged of papi's run papi-1", got)
	}
	if got := diffFleet(after, after); len(got) != 0 {
		t.Fatalf("no change gave %+v", got)
	}
}
