package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/store"
)

// The JSON records an agentinfra before the store wrote (history.jsonl and
// runs/{run}.result.json, of agents and of archived agents) are imported
// once: `agent history` answers the same, and a line written after the
// import is not imported again.
func TestOldJSONRecordsAreImportedOnce(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws)
	ctx := context.Background()
	if err := f.p.ensure(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	code := 0
	old := []fleet.TaskRun{
		{ID: "papi-1", AgentName: "papi", Summary: "first", Status: fleet.RunCompleted, Source: fleet.SourceHuman, CreatedAt: at, StartedAt: &at, CompletedAt: &at, SessionID: "s1", ExitCode: &code},
		{ID: "papi-2", AgentName: "papi", Summary: "second", Status: fleet.RunFailed, Source: fleet.SourceHuman, CreatedAt: at, StartedAt: &at, CompletedAt: &at, ExitReason: "exit 1"},
	}
	dir := filepath.Join(f.p.agentsDir(), fleet.Key("papi"))
	archived := filepath.Join(f.p.archiveDir(), "gone-20261101T100000.000000000Z")
	for _, d := range []string{filepath.Join(dir, "runs"), archived} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range old {
		if _, err := statefile.AppendLine(filepath.Join(dir, historyFile), tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "runs", "papi-1.result.json"),
		[]byte(`{"run_id":"papi-1","caller":"fleet","agent":"@papi","outcome":"success","argv":["gemini","--prompt=<prompt>"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := statefile.AppendLine(filepath.Join(archived, historyFile), fleet.TaskRun{ID: "gone-1", AgentName: "gone", Summary: "x", Status: fleet.RunCompleted, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}

	runs, err := f.finishedRuns(ctx, "papi")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "papi-1" || runs[1].ID != "papi-2" || runs[0].SessionID != "s1" || runs[1].ExitReason != "exit 1" {
		t.Fatalf("imported history: %+v", runs)
	}
	rec, err := f.storedRecord(ctx, "papi-1")
	if err != nil || rec == nil || rec.Outcome != "success" || len(rec.Argv) != 2 {
		t.Fatalf("imported record: %+v %v", rec, err)
	}
	var arch []store.RunRow
	if err := f.withRuns(ctx, func(st *store.Store) (err error) {
		arch, err = st.Runs(ctx, store.RunFilter{Archived: filepath.Base(archived)})
		return err
	}); err != nil || len(arch) != 1 || arch[0].RunID != "gone-1" {
		t.Fatalf("archived runs: %+v %v", arch, err)
	}

	// Written after the import (an old agentinfra still running): not read.
	if _, err := statefile.AppendLine(filepath.Join(dir, historyFile), fleet.TaskRun{ID: "papi-3", AgentName: "papi", Status: fleet.RunCompleted, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if runs, err = f.finishedRuns(ctx, "papi"); err != nil || len(runs) != 2 {
		t.Fatalf("the import ran twice: %+v %v", runs, err)
	}
}
