package agentrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/store"
)

// Stored is the Recorder of a run in the workspace's store: the record is a
// row of the runs table (schema v3), the log stays a JSONL file at LogPath
// (it is appended to line by line while the run lasts and followed by
// `agent logs --follow`; a file is what both want).
type Stored struct {
	Store   *store.Store
	LogPath string
	// Doc, when set, is what the row keeps as the record instead of the
	// bare one (dispatch keeps its Outcome: the record with the prompt's
	// parts and its files).
	Doc func(*Record) any
	// Summary, when set, is the caller's summary of the finished run (the
	// fleet's history entry), kept with it.
	Summary any
	// Finished says the run has ended: it joins the history.
	Finished bool
}

// Save writes the record as the run's row.
func (s Stored) Save(rec *Record) error {
	row, err := RowOf(rec, s.Doc)
	if err != nil {
		return err
	}
	if s.Summary != nil {
		if row.Summary, err = json.Marshal(s.Summary); err != nil {
			return err
		}
	}
	row.Finished = s.Finished
	return s.Store.SaveRun(context.Background(), row)
}

// Log opens LogPath for appending (created when missing).
func (s Stored) Log(rec *Record) (LogWriter, error) { return Files{LogPath: s.LogPath}.Log(rec) }

// RowOf is the runs table's row of a record (doc, when set, is what the
// row keeps as the record).
func RowOf(rec *Record, doc func(*Record) any) (store.RunRow, error) {
	var v any = rec
	if doc != nil {
		v = doc(rec)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return store.RunRow{}, fmt.Errorf("the record of run %s: %w", rec.RunID, err)
	}
	return store.RunRow{
		RunID: rec.RunID, Caller: rec.Caller, Agent: AgentKey(rec.Agent), TaskID: rec.TaskID, Status: rec.Status, Outcome: rec.Outcome,
		CreatedAt: rec.CreatedAt, StartedAt: rec.StartedAt, EndedAt: rec.EndedAt, Record: b,
	}, nil
}

// AgentKey is how the runs table names a run's agent: without its @, in
// lower case (the fleet's agent names are unique regardless of case).
func AgentKey(agent string) string { return strings.ToLower(strings.TrimPrefix(agent, "@")) }

// RecordOf reads a record the runs table keeps (a dispatch's Outcome reads
// as its record: the record's fields are at its top level).
func RecordOf(row store.RunRow) (*Record, error) {
	var rec Record
	if err := json.Unmarshal(row.Record, &rec); err != nil {
		return nil, fmt.Errorf("the record of run %s: %w", row.RunID, err)
	}
	return &rec, nil
}

// UpdateStored saves rec over the run's row, keeping the fields of the
// caller's document that the record does not have (dispatch's prompt parts
// and files), and marks the run finished when it has ended.
func UpdateStored(ctx context.Context, st *store.Store, row store.RunRow, rec *Record) error {
	doc := map[string]json.RawMessage{}
	json.Unmarshal(row.Record, &doc) // a row that is not an object is replaced
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for k, v := range fields {
		doc[k] = v
	}
	merged, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	next, err := RowOf(rec, nil)
	if err != nil {
		return err
	}
	next.Record, next.Finished, next.Summary = merged, rec.EndedAt != nil, row.Summary
	return st.SaveRun(ctx, next)
}
