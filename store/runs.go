package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Callers of a run (the runs table's caller column).
const (
	CallerDispatch = "dispatch"
	CallerFleet    = "fleet"
)

// RunRow is one run of an agent CLI as the runs table keeps it: the
// columns its look-ups need, and the caller's record as JSON (package
// agentrun's Record; dispatch's Outcome around it). The store does not read
// the record: it keeps it.
type RunRow struct {
	RunID  string
	Caller string // CallerDispatch or CallerFleet
	// Agent is the fleet agent's name (its key), or dispatch's @mode.
	Agent     string
	TaskID    string
	Status    string
	Outcome   string
	CreatedAt *time.Time
	StartedAt *time.Time
	EndedAt   *time.Time
	// Record is the run's record as JSON.
	Record json.RawMessage
	// Summary is the caller's summary of a finished run as JSON (the
	// fleet's history entry); nil keeps the one saved.
	Summary json.RawMessage
	// Finished marks the run as ended: it joins the history, in the order
	// runs finish (FinishedSeq). Saving a finished run again keeps its place.
	Finished    bool
	FinishedSeq int64
	// Archived is the archive a deleted agent's runs went to ("" = current).
	Archived  string
	UpdatedAt time.Time
}

const runCols = `run_id, caller, agent, task_id, status, outcome, created_at, started_at, ended_at, finished_seq, archived, record, summary, updated_at`

func scanRun(sc scanner) (RunRow, error) {
	var r RunRow
	var created, started, ended, seq sql.NullInt64
	var record, summary string
	var updated int64
	err := sc.Scan(&r.RunID, &r.Caller, &r.Agent, &r.TaskID, &r.Status, &r.Outcome, &created, &started, &ended, &seq,
		&r.Archived, &record, &summary, &updated)
	r.CreatedAt, r.StartedAt, r.EndedAt = fromNullMS(created), fromNullMS(started), fromNullMS(ended)
	r.Finished, r.FinishedSeq = seq.Valid, seq.Int64
	r.Record = json.RawMessage(record)
	if summary != "" {
		r.Summary = json.RawMessage(summary)
	}
	r.UpdatedAt = fromMS(updated)
	return r, err
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

// SaveRun writes the current run r.RunID (inserted, or replaced keeping
// what r leaves unset: its summary when r.Summary is nil, its place in the
// history once finished). A run is saved when it starts and when it ends,
// by whichever process runs it.
func (s *Store) SaveRun(ctx context.Context, r RunRow) error {
	if r.RunID == "" || (r.Caller != CallerDispatch && r.Caller != CallerFleet) {
		return fmt.Errorf("SaveRun: a run needs its ID and a caller (dispatch or fleet), got %q, %q", r.RunID, r.Caller)
	}
	if len(r.Record) == 0 {
		r.Record = json.RawMessage("{}")
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return saveRunTx(ctx, tx, r, ms(s.now()))
	})
}

func saveRunTx(ctx context.Context, tx *sql.Tx, r RunRow, now int64) error {
	summary := any(nil)
	if r.Summary != nil {
		summary = string(r.Summary)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO runs (run_id, caller, agent, task_id, status, outcome, created_at, started_at, ended_at, record, summary, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, ''), ?)
		ON CONFLICT (run_id) WHERE archived = '' DO UPDATE SET caller = excluded.caller, agent = excluded.agent, task_id = excluded.task_id,
			status = excluded.status, outcome = excluded.outcome, created_at = excluded.created_at, started_at = excluded.started_at,
			ended_at = excluded.ended_at, record = excluded.record, summary = COALESCE(?, summary), updated_at = excluded.updated_at`,
		r.RunID, r.Caller, r.Agent, r.TaskID, r.Status, r.Outcome, nullTime(r.CreatedAt), nullTime(r.StartedAt), nullTime(r.EndedAt),
		string(r.Record), summary, now, summary)
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.RunID, err)
	}
	if r.Finished {
		_, err = tx.ExecContext(ctx, `UPDATE runs SET finished_seq = (SELECT COALESCE(MAX(finished_seq), 0) + 1 FROM runs)
			WHERE run_id = ? AND archived = '' AND finished_seq IS NULL`, r.RunID)
	}
	return err
}

// Run reads the current run runID (ErrNotFound when there is none).
func (s *Store) Run(ctx context.Context, runID string) (RunRow, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE run_id = ? AND archived = ''`, runID))
	if isNoRows(err) {
		return RunRow{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	return r, err
}

// RunFilter selects runs; empty fields match everything but archived runs.
type RunFilter struct {
	Caller string
	Agent  string
	TaskID string
	// Finished lists only the finished runs, in the order they finished,
	// the last first.
	Finished bool
	// Archived lists the runs of that archive instead of the current ones.
	Archived string
	Limit    int
}

// Runs lists runs, the newest first (the last finished first with
// Finished).
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]RunRow, error) {
	q := `SELECT ` + runCols + ` FROM runs WHERE archived = ?`
	args := []any{f.Archived}
	for _, c := range []struct{ col, v string }{{"caller", f.Caller}, {"agent", f.Agent}, {"task_id", f.TaskID}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	if f.Finished {
		q += ` AND finished_seq IS NOT NULL ORDER BY finished_seq DESC`
	} else {
		q += ` ORDER BY id DESC`
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return queryAll(ctx, s.db, scanRun, q, args...)
}

// ArchiveRuns moves the current runs of a caller's agent to archive (a
// deleted agent's history): they leave its history, and its name and run
// IDs may be used again. It returns how many runs moved.
func (s *Store) ArchiveRuns(ctx context.Context, caller, agent, archive string) (int64, error) {
	if archive == "" {
		return 0, fmt.Errorf("ArchiveRuns: no archive name")
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET archived = ?, updated_at = ? WHERE caller = ? AND agent = ? AND archived = ''`,
		archive, ms(s.now()), caller, agent)
	if err != nil {
		return 0, fmt.Errorf("archive the runs of %s: %w", agent, err)
	}
	return res.RowsAffected()
}

// Imported reports whether source was imported already.
func (s *Store) Imported(ctx context.Context, source string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM imports WHERE source = ?`, source).Scan(&n)
	return n > 0, err
}

// ImportRuns imports the runs that read returns, once per source: the
// first process to get here reads and inserts them and marks the source
// imported, in one transaction; any later call (or a concurrent one that
// waited for it) changes nothing. A run already in the table (saved since)
// is kept as it is. Runs are inserted in the order given: finished ones
// take their places in the history in that order.
func (s *Store) ImportRuns(ctx context.Context, source string, read func() ([]RunRow, error)) (imported int, err error) {
	if done, err := s.Imported(ctx, source); err != nil || done {
		return 0, err
	}
	rows, err := read()
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", source, err)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM imports WHERE source = ?`, source).Scan(&n); err != nil || n > 0 {
			return err
		}
		now := ms(s.now())
		for _, r := range rows {
			var exists int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE run_id = ? AND archived = ?`, r.RunID, r.Archived).Scan(&exists); err != nil {
				return err
			}
			if exists > 0 {
				continue
			}
			if r.Archived != "" { // straight into its archive
				if err := insertArchivedTx(ctx, tx, r, now); err != nil {
					return err
				}
			} else if err := saveRunTx(ctx, tx, r, now); err != nil {
				return err
			}
			imported++
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO imports (source, at, rows) VALUES (?, ?, ?)`, source, now, imported)
		return err
	})
	if err != nil {
		return 0, err
	}
	return imported, nil
}

func insertArchivedTx(ctx context.Context, tx *sql.Tx, r RunRow, now int64) error {
	var seq any // NULL unless finished
	if r.Finished {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(finished_seq), 0) + 1 FROM runs`).Scan(&seq); err != nil {
			return err
		}
	}
	if len(r.Record) == 0 {
		r.Record = json.RawMessage("{}")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO runs (run_id, caller, agent, task_id, status, outcome, created_at, started_at, ended_at, finished_seq, archived, record, summary, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RunID, r.Caller, r.Agent, r.TaskID, r.Status, r.Outcome, nullTime(r.CreatedAt), nullTime(r.StartedAt), nullTime(r.EndedAt),
		seq, r.Archived, string(r.Record), strings.TrimSpace(string(r.Summary)), now)
	return err
}
