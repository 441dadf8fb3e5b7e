package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/store"
)

// The result files of an agentinfra before the store (written with or
// without a run ID) become rows of the runs table once, with the whole
// Outcome kept.
func TestOldResultFilesAreImportedOnce(t *testing.T) {
	ws := dispatchWorkspace(t)
	tracking := filepath.Join(ws.TasksDir(), "a1a1a1_implement-the-retry-loop", "tracking")
	fakemodel.WriteFile(t, filepath.Join(tracking, "20261101T100000Z_result.json"),
		`{"id":"a1a1a1","dry_run":false,"outcome":"success","cli":"gemini","ended_at":"2026-11-01T10:01:00Z","prompt_parts":[{"kind":"task","name":"task","bytes":10}],"tracking_file":"x"}`)
	fakemodel.WriteFile(t, filepath.Join(tracking, "20261102T100000Z_result.json"),
		`{"id":"a1a1a1","run_id":"a1a1a1-20261102T100000Z","outcome":"failed","cli":"claude","ended_at":"2026-11-02T10:01:00Z"}`)
	ctx := context.Background()
	st, err := openRunStore(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Runs(ctx, store.RunFilter{Caller: store.CallerDispatch, TaskID: "a1a1a1", Finished: true})
	if err != nil || len(rows) != 2 {
		t.Fatalf("imported: %+v %v", rows, err)
	}
	old, err := st.Run(ctx, "a1a1a1-20261101T100000Z")
	if err != nil || old.Outcome != "success" || !jsonHas(old.Record, `"prompt_parts"`) {
		t.Fatalf("the run without an ID: %+v %v", old, err)
	}
	fakemodel.WriteFile(t, filepath.Join(tracking, "20261103T100000Z_result.json"), `{"id":"a1a1a1","run_id":"late","outcome":"success"}`)
	st2, err := openRunStore(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, err := st2.Run(ctx, "late"); err == nil {
		t.Fatal("the import ran twice")
	}
}

func jsonHas(b []byte, s string) bool { return len(b) > 0 && strings.Contains(string(b), s) }
