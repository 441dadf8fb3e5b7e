package local

// Issue 27, item 12: after a storage failure the run's record, its
// history entry and the matrix agree. A fleet run whose database is
// deleted while it runs ends with its record written into the database
// now at the store's path (a fresh one), where every later command reads
// it: the agent's history lists it, its row is finished with the outcome
// its history says, and its task moved on as the record says.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// deleteDatabase removes the workspace's database with its WAL and
// shared memory, as a person's rm of the state folder would.
func deleteDatabase(t *testing.T, path string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

func TestFleetRunRecordedAfterItsDatabaseWasDeleted(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_GATE="+gate)
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	if _, _, err := tasksvc.ScaffoldTask(ctx, ws, "c3c3c3", tasksvc.ScaffoldOptions{}, f.now()); err != nil {
		t.Fatal(err)
	}
	os.Remove(gate) // the next run waits until the database is gone
	res, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"})
	if err != nil {
		t.Fatal(err)
	}
	runID := res.Task.ID
	// The supervisor has the database open once the run's row is there.
	poll.Eventually(t, func() bool { rec, _ := f.storedRecord(ctx, runID); return rec != nil }, "run %s was not recorded as it began", runID)
	deleteDatabase(t, store.PathIn(ws))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)

	tr, row, rec := endedRun(t, f, "papi", runID)
	tk := taskOf(t, ws, "c3c3c3")
	if !row.Finished || rec.EndedAt == nil || rec.Status != tr.Status || rec.StatusAfter != tk.Status || !strings.Contains(tr.ExitReason, "task c3c3c3 is "+tk.Status) {
		t.Fatalf("they disagree: the row (finished %v) says %s/%s, task after %s; the history %s (%s); the matrix %s",
			row.Finished, rec.Outcome, rec.Status, rec.StatusAfter, tr.Status, tr.ExitReason, tk.Status)
	}
	t.Logf("run %s: %s, %s; task %s; warnings %q", runID, rec.Outcome, tr.ExitReason, tk.Status, rec.Warnings)
}

// endedRun is run runID of agent name as the agent's history lists it and
// as the database now at the store's path keeps it (its row and record),
// the record saying its database was lost.
func endedRun(t *testing.T, f *Fleet, name, runID string) (fleet.TaskRun, store.RunRow, *agentrun.Record) {
	t.Helper()
	ctx := context.Background()
	h, err := f.History(ctx, name, 1, fleet.DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(h.Tasks, func(tr fleet.TaskRun) bool { return tr.ID == runID })
	if i < 0 {
		t.Fatalf("the agent's history does not list run %s: %+v", runID, h.Tasks)
	}
	st, err := store.OpenWorkspace(ctx, f.ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.Run(ctx, runID)
	if err != nil {
		t.Fatalf("run %s is not in the database now at the path: %v", runID, err)
	}
	rec, err := agentrun.RecordOf(row)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "the database was deleted or replaced during the run") {
		t.Errorf("the record does not say its database was lost: %q", rec.Warnings)
	}
	return h.Tasks[i], row, rec
}
