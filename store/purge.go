package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// DefaultPurgeBatch is how many sessions one purge transaction deletes.
const DefaultPurgeBatch = 200

// PurgeOptions say what a purge removes.
type PurgeOptions struct {
	// Before: sessions that ended (terminated or interrupted) before this
	// time go, with everything that belongs to them.
	Before time.Time
	// Batch is the number of sessions per transaction (0 = DefaultPurgeBatch).
	Batch  int
	DryRun bool
	// BeforeDelete gets the checkpoints of each batch before their rows go
	// (package checkpoint deletes their git refs: a ref left behind by a
	// crash in between is harmless; a row pointing at a deleted ref of a
	// purged session is never read again).
	BeforeDelete func(ctx context.Context, cps []Checkpoint) error
	// By is who purges (the audit log's summary line).
	By string
}

// PurgeReport counts what a purge removed (or would remove).
type PurgeReport struct {
	Sessions    int `json:"sessions"`
	Requests    int `json:"requests"`
	Alerts      int `json:"alerts"`
	Prompts     int `json:"prompts"`
	Steering    int `json:"steering"`
	Checkpoints int `json:"checkpoints"`
	Audit       int `json:"audit"`
	Batches     int `json:"batches"`
	// LongestBatch is the longest time one transaction held the write
	// lock: what another writer may have waited at most.
	LongestBatch time.Duration `json:"longest_batch_ns"`
	DryRun       bool          `json:"dry_run,omitempty"`
}

// childTables are the tables whose rows belong to a session (besides the
// audit log), in the order they are deleted.
var childTables = []struct {
	name  string
	count func(*PurgeReport) *int
}{
	{"approvals", func(r *PurgeReport) *int { return &r.Requests }},
	{"alerts", func(r *PurgeReport) *int { return &r.Alerts }},
	{"prompts", func(r *PurgeReport) *int { return &r.Prompts }},
	{"steering", func(r *PurgeReport) *int { return &r.Steering }},
	{"checkpoints", func(r *PurgeReport) *int { return &r.Checkpoints }},
}

const endedBefore = `status IN ('terminated','interrupted') AND ended_at IS NOT NULL AND ended_at < ?`

// Purge deletes the sessions that ended before o.Before, with their
// requests, alerts, prompts, steering messages, checkpoints and audit rows,
// in batches of short transactions: between two batches it waits as long
// as the last one took, so other writers (decisions, a live session's
// requests) get at least half of the time. Live sessions are never
// touched. A summary row stays in the audit log. The refusals of a remote
// surface that name no session go too when older than o.Before.
func (s *Store) Purge(ctx context.Context, o PurgeOptions) (PurgeReport, error) {
	if o.Batch <= 0 {
		o.Batch = DefaultPurgeBatch
	}
	cutoff := ms(o.Before)
	rep := PurgeReport{DryRun: o.DryRun}
	refused, err := s.purgeRefusals(ctx, cutoff, o.DryRun)
	if err != nil {
		return rep, fmt.Errorf("purge the refusals that name no session: %w", err)
	}
	if o.DryRun {
		err := s.countPurge(ctx, cutoff, &rep)
		rep.Audit += refused
		return rep, err
	}
	rep.Audit += refused
	var first, last int64
	for {
		ids, err := s.sessionIDs(ctx, `SELECT id FROM sessions WHERE `+endedBefore+` ORDER BY id LIMIT ?`, cutoff, o.Batch)
		if err != nil || len(ids) == 0 {
			if rep.Sessions > 0 {
				rerr := s.Record(ctx, Event{Actor: orActor(o.By), Surface: SurfaceSupervisor, Action: "sessions_purged",
					Detail: mustJSON(map[string]any{"sessions": rep.Sessions, "first": first, "last": last, "before": o.Before.UTC().Format(time.RFC3339)})})
				if err == nil && rerr != nil {
					err = fmt.Errorf("record the purge in the audit log: %w", rerr)
				}
			}
			return rep, err
		}
		if o.BeforeDelete != nil {
			cps, err := s.checkpointsOf(ctx, ids)
			if err != nil {
				return rep, err
			}
			if len(cps) > 0 {
				if err := o.BeforeDelete(ctx, cps); err != nil {
					return rep, err
				}
			}
		}
		start := time.Now()
		if err := s.tx(ctx, func(tx *sql.Tx) error { return purgeBatchTx(ctx, tx, ids, cutoff, &rep) }); err != nil {
			return rep, fmt.Errorf("purge sessions %d-%d: %w", ids[0], ids[len(ids)-1], err)
		}
		took := time.Since(start)
		rep.Batches++
		rep.LongestBatch = max(rep.LongestBatch, took)
		if first == 0 {
			first = ids[0]
		}
		last = ids[len(ids)-1]
		select { // leave the lock to others for as long as we held it
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(took):
		}
	}
}

func orActor(by string) string {
	if by == "" {
		return ActorAgentinfra
	}
	return by
}

func purgeBatchTx(ctx context.Context, tx *sql.Tx, ids []int64, cutoff int64, rep *PurgeReport) error {
	in, args := inList(ids)
	// Re-read inside the transaction: only what still qualifies goes.
	rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions WHERE id IN `+in+` AND `+endedBefore, append(args, cutoff)...)
	if err != nil {
		return err
	}
	var keep []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		keep = append(keep, id)
	}
	rows.Close()
	if len(keep) == 0 {
		return nil
	}
	in, args = inList(keep)
	for _, t := range childTables {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE session_id IN `+in, args...)
		if err != nil {
			return fmt.Errorf("delete from %s: %w", t.name, err)
		}
		n, _ := res.RowsAffected()
		*t.count(rep) += int(n)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id IN `+in, args...)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	rep.Sessions += int(n)
	// After the sessions: the audit trigger lets only an absent session's rows go.
	res, err = tx.ExecContext(ctx, `DELETE FROM audit WHERE session_id IN `+in, args...)
	if err != nil {
		return fmt.Errorf("delete from audit: %w", err)
	}
	n, _ = res.RowsAffected()
	rep.Audit += int(n)
	return nil
}

func (s *Store) countPurge(ctx context.Context, cutoff int64, rep *PurgeReport) error {
	sub := `(SELECT id FROM sessions WHERE ` + endedBefore + `)`
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE `+endedBefore, cutoff).Scan(&rep.Sessions); err != nil {
		return err
	}
	for _, t := range append(childTables, struct {
		name  string
		count func(*PurgeReport) *int
	}{"audit", func(r *PurgeReport) *int { return &r.Audit }}) {
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.name+` WHERE session_id IN `+sub, cutoff).Scan(t.count(rep)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) sessionIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *Store) checkpointsOf(ctx context.Context, ids []int64) ([]Checkpoint, error) {
	in, args := inList(ids)
	return queryAll(ctx, s.db, scanCheckpoint, `SELECT `+checkpointCols+` FROM checkpoints WHERE session_id IN `+in+` ORDER BY id`, args...)
}

// inList is "(?,?,…)" and its arguments.
func inList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")", args
}
