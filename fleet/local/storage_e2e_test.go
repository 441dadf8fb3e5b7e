package local

// Issue 27, item 12, for the fleet: a supervised fleet run (the real
// claude against a fake that asks for `touch ok.txt`) whose database is
// deleted while its request waits ends by itself, failed, saying why; its
// record is written into the database now at the store's path, and that
// record, the agent's history and the matrix agree (BLOCKED).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/store"
)

func TestFleetSupervisedRunEndsClearlyWhenItsDatabaseIsDeleted(t *testing.T) {
	t.Parallel()
	f, st := supervisedFleet(t)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "kiki", CLI: "claude", Spec: "warm up"}); err != nil {
		t.Fatal(err)
	}
	waitReal(t, f, "kiki", nil, fleet.StatusIdle, fleet.StatusFailed) // the spec run: no tool, no request
	res, err := f.Start(ctx, fleet.StartInput{Name: "kiki", TaskID: "c3c3c3", Note: "Please touch ok.txt", Owner: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	runID := res.Task.ID
	pendingOf(t, st)
	deleteDatabase(t, store.PathIn(f.ws))

	a := waitReal(t, f, "kiki", nil, fleet.StatusIdle, fleet.StatusFailed)
	if _, err := os.Stat(filepath.Join(a.Workspace.Path, "ok.txt")); err == nil {
		t.Error("nobody approved, but ok.txt exists")
	}
	tr, row, rec := endedRun(t, f, "kiki", runID)
	if tr.Status != fleet.RunFailed || !strings.Contains(tr.ExitReason, "was deleted") {
		t.Fatalf("the agent's history of run %s: %+v", runID, tr)
	}
	tk := taskOf(t, f.ws, "c3c3c3")
	if !row.Finished || rec.Outcome != agentrun.OutcomeFailed || !strings.Contains(rec.Reason, "was deleted") || rec.StatusAfter != "BLOCKED" || tk.Status != "BLOCKED" {
		t.Fatalf("they disagree: the row (finished %v) says %s (%s), task after %s; the matrix %s", row.Finished, rec.Outcome, rec.Reason, rec.StatusAfter, tk.Status)
	}
	fresh, err := store.OpenWorkspace(ctx, f.ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if live, _ := fresh.LiveSupervisors(ctx); len(live) != 0 {
		t.Errorf("sessions still hold a place: %v", live)
	}
	fs, _ := store.Failures(store.StateDir(f.ws))
	if len(fs) == 0 || fs[0].What != "deleted" || fs[0].RunID != runID {
		t.Errorf("the log of storage failures: %+v", fs)
	}
	t.Logf("run %s: %s — %s; history %s; task %s", runID, rec.Outcome, rec.Reason, tr.ExitReason, tk.Status)
}
