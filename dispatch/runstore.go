package dispatch

// A dispatch's record is kept twice on purpose: {stamp}_result.json in the
// task folder (next to the tracking note, what a person reads with the
// task) and a row of the workspace store's runs table (what `session show`
// and the supervision commands look up by run ID; the record of a
// supervised run must be there for a crashed supervisor to be reaped). The
// result files of an agentinfra before the store are imported once.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// importSource names the import of dispatch's result files.
const importSource = "dispatch-json"

// openRunStore opens the workspace's store for the run's record (importing
// the old result files the first time). The caller closes it.
func openRunStore(ctx context.Context, ws *workspace.Workspace) (*store.Store, error) {
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := st.ImportRuns(ctx, importSource, func() ([]store.RunRow, error) { return legacyRuns(ws) }); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// legacyRuns reads every tracking/{stamp}_result.json of the task folders.
func legacyRuns(ws *workspace.Workspace) ([]store.RunRow, error) {
	files, err := filepath.Glob(filepath.Join(ws.TasksDir(), "*", "tracking", "*_result.json"))
	if err != nil {
		return nil, err
	}
	var rows []store.RunRow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var o Outcome
		if json.Unmarshal(b, &o) != nil || o.DryRun {
			continue
		}
		if o.RunID == "" { // written before run IDs: {task}-{stamp}
			o.RunID = o.ID + "-" + strings.TrimSuffix(filepath.Base(f), "_result.json")
		}
		o.Caller = agentrun.CallerDispatch
		if o.TaskID == "" {
			o.TaskID = o.ID
		}
		row, err := agentrun.RowOf(&o.Record, func(*agentrun.Record) any { return json.RawMessage(b) })
		if err != nil {
			continue
		}
		row.Finished = o.EndedAt != nil
		rows = append(rows, row)
	}
	return rows, nil
}

// bothRecorder keeps the record as the result file and as the store's row.
type bothRecorder struct {
	files  agentrun.Files
	stored *agentrun.Stored // nil when the store could not be opened
}

func (b bothRecorder) Save(rec *agentrun.Record) error {
	err := b.files.Save(rec)
	if b.stored != nil {
		s := *b.stored
		s.Finished = rec.EndedAt != nil
		if serr := s.Save(rec); err == nil {
			err = serr
		}
	}
	return err
}

func (b bothRecorder) Log(rec *agentrun.Record) (agentrun.LogWriter, error) { return b.files.Log(rec) }
