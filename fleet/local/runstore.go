package local

// The fleet's run records live in the workspace's store (the runs table,
// package store): a run's record is saved when its supervisor starts it
// and when it ends, with its history entry (TaskRun); an agent's history is
// its finished runs in the order they ended. The run's log stays a JSONL
// file next to the agent (runs/{run}.log.jsonl), and run.json (the current
// run, what its supervisor needs) stays a file too: it is how the processes
// of one agent coordinate under the agent's lock.
//
// The records of an agentinfra before the store (history.jsonl and
// runs/{run}.result.json of every agent and archived agent) are imported
// once, the first time the fleet opens the store; the files are left as
// they are.

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/store"
)

// importSource names the fleet's import of its JSON records.
const importSource = "fleet-json"

// runStore opens the workspace's store (importing the fleet's JSON records
// the first time). The caller closes it.
func (f *Fleet) runStore(ctx context.Context) (*store.Store, error) {
	st, err := store.OpenWorkspace(ctx, f.ws, store.Options{})
	if err != nil {
		return nil, agenterr.Unavailablef(err, "could not open the run records")
	}
	if _, err := st.ImportRuns(ctx, importSource, f.legacyRuns); err != nil {
		st.Close()
		return nil, agenterr.Unavailablef(err, "could not import the fleet's run records")
	}
	return st, nil
}

// withRuns runs fn with the store open.
func (f *Fleet) withRuns(ctx context.Context, fn func(*store.Store) error) error {
	st, err := f.runStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// finishedRuns returns agent name's finished runs, oldest first.
func (f *Fleet) finishedRuns(ctx context.Context, name string) ([]fleet.TaskRun, error) {
	var out []fleet.TaskRun
	err := f.withRuns(ctx, func(st *store.Store) error {
		rows, err := st.Runs(ctx, store.RunFilter{Caller: store.CallerFleet, Agent: fleet.Key(name), Finished: true})
		if err != nil {
			return err
		}
		for i := len(rows) - 1; i >= 0; i-- {
			var tr fleet.TaskRun
			if json.Unmarshal(rows[i].Summary, &tr) == nil && tr.ID != "" {
				out = append(out, tr)
			}
		}
		return nil
	})
	return out, err
}

// storedRecord reads the record of run runID (nil when none was saved).
func (f *Fleet) storedRecord(ctx context.Context, runID string) (*agentrun.Record, error) {
	var rec *agentrun.Record
	err := f.withRuns(ctx, func(st *store.Store) error {
		row, err := st.Run(ctx, runID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		rec, err = agentrun.RecordOf(row)
		return err
	})
	return rec, err
}

// saveFinished records an ended run: its record and its history entry.
func (f *Fleet) saveFinished(ctx context.Context, rec *agentrun.Record, tr fleet.TaskRun) error {
	return f.withRuns(ctx, func(st *store.Store) error {
		return agentrun.Stored{Store: st, Summary: tr, Finished: true}.Save(rec)
	})
}

// legacyRuns reads the JSON records written before the store: every
// agent's and archived agent's history.jsonl, with the record each run's
// runs/{run}.result.json holds.
func (f *Fleet) legacyRuns() ([]store.RunRow, error) {
	var rows []store.RunRow
	read := func(dir, archived string) error {
		runs, err := statefile.ReadLines[fleet.TaskRun](filepath.Join(dir, historyFile))
		if err != nil {
			return err
		}
		for _, tr := range runs {
			row := store.RunRow{RunID: tr.ID, Caller: store.CallerFleet, Agent: fleet.Key(tr.AgentName), TaskID: tr.TaskID, Status: tr.Status,
				StartedAt: tr.StartedAt, EndedAt: tr.CompletedAt, Finished: true, Archived: archived}
			created := tr.CreatedAt
			row.CreatedAt = &created
			row.Summary, _ = json.Marshal(tr)
			rec, err := os.ReadFile(filepath.Join(dir, "runs", tr.ID+".result.json"))
			var r agentrun.Record
			if err == nil && json.Unmarshal(rec, &r) == nil {
				row.Record, row.Outcome = rec, r.Outcome
			} else {
				row.Record = row.Summary // the history line is all there is
			}
			rows = append(rows, row)
		}
		return nil
	}
	for _, parent := range []struct{ dir, archive string }{{f.p.agentsDir(), ""}, {f.p.archiveDir(), "archive"}} {
		ents, err := os.ReadDir(parent.dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			archived := ""
			if parent.archive != "" {
				archived = e.Name()
			}
			if err := read(filepath.Join(parent.dir, e.Name()), archived); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}
