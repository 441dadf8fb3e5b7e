package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A remote surface's outbox: the audit events it has to post about, kept
// until they are posted. The surface moves events from the audit log into
// its outbox together with its cursor (one transaction: an event is either
// read and kept, or read again), then posts them, each session's in order;
// what Slack refused stays, with when to try again.

// OutboxItem is one audit event a surface has still to post about.
type OutboxItem struct {
	Surface   string
	Seq       int64 // the audit event's
	SessionID int64
	Attempts  int
	NextAt    time.Time // not tried again before
	LastError string
	// Steps are the parts of the event's messages already posted (a
	// retry posts only the rest).
	Steps []string
	// Event is the audit event itself.
	Event Event
}

// Has reports whether step was done.
func (o OutboxItem) Has(step string) bool { return slices.Contains(o.Steps, step) }

// EnqueueOutbox keeps the events of seqs (each with its session) in the
// surface's outbox and moves its cursor to cursor, in one transaction.
func (s *Store) EnqueueOutbox(ctx context.Context, surface string, items []OutboxItem, cursor int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, it := range items {
			if _, err := tx.ExecContext(ctx, `INSERT INTO surface_outbox (surface, audit_seq, session_id) VALUES (?, ?, ?)
				ON CONFLICT (surface, audit_seq) DO NOTHING`, surface, it.Seq, it.SessionID); err != nil {
				return fmt.Errorf("keep audit event %d in the %s outbox: %w", it.Seq, surface, err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO surface_cursors (surface, audit_seq) VALUES (?, ?)
			ON CONFLICT (surface) DO UPDATE SET audit_seq = excluded.audit_seq`, surface, cursor)
		return err
	})
}

// OutboxHeads lists, oldest first, the first item of each session in the
// surface's outbox (a session's later items wait for it), with its audit
// event.
func (s *Store) OutboxHeads(ctx context.Context, surface string) ([]OutboxItem, error) {
	return queryAll(ctx, s.db, func(sc scanner) (OutboxItem, error) {
		var it OutboxItem
		var next int64
		var steps string
		e, err := scanEvent(withMore{sc, []any{&it.Surface, &it.Seq, &it.SessionID, &it.Attempts, &next, &it.LastError, &steps}})
		it.Event, it.NextAt = e, fromMS(next)
		if steps != "" {
			it.Steps = strings.Split(steps, ",")
		}
		return it, err
	}, `SELECT `+outboxEventCols+`, o.surface, o.audit_seq, o.session_id, o.attempts, o.next_at, o.last_error, o.steps
		FROM surface_outbox o JOIN audit a ON a.seq = o.audit_seq
		WHERE o.surface = ? AND o.audit_seq = (SELECT MIN(audit_seq) FROM surface_outbox WHERE surface = o.surface AND session_id = o.session_id)
		ORDER BY o.audit_seq`, surface)
}

// outboxEventCols are eventCols of the audit table as "a".
const outboxEventCols = `a.seq, a.at, COALESCE(a.session_id, 0), COALESCE(a.request_id, 0), a.actor, a.surface, a.action, a.detail`

// OutboxDone removes a posted item.
func (s *Store) OutboxDone(ctx context.Context, surface string, seq int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM surface_outbox WHERE surface = ? AND audit_seq = ?`, surface, seq)
	return err
}

// OutboxRetry records that an item could not be posted: it is tried again
// at next.
func (s *Store) OutboxRetry(ctx context.Context, surface string, seq int64, next time.Time, why string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE surface_outbox SET attempts = attempts + 1, next_at = ?, last_error = ? WHERE surface = ? AND audit_seq = ?`,
		ms(next), why, surface, seq)
	return err
}

// OutboxStep records a part of an item's messages as posted.
func (s *Store) OutboxStep(ctx context.Context, surface string, seq int64, step string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE surface_outbox SET steps = CASE steps WHEN '' THEN ? ELSE steps || ',' || ? END
		WHERE surface = ? AND audit_seq = ?`, step, step, surface, seq)
	return err
}

// OutboxLen counts the items a surface has still to post.
func (s *Store) OutboxLen(ctx context.Context, surface string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM surface_outbox WHERE surface = ?`, surface).Scan(&n)
	return n, err
}
