package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentinfra/agentinfra/agenterr"
)

// ErrConsumed: an approved change was already applied (accept_diff twice).
var ErrConsumed = agenterr.New(agenterr.Conflict, "already consumed")

// Consumable is what accept_diff needs of an approved edit.
type Consumable struct {
	Request
	FileHash string
}

// ClaimApproved takes an approved request for applying it, once: the
// second claim gets ErrConsumed; a request that is not approved gets a
// *DecidedError-like error saying its status. Release gives the claim back
// when the change could not be applied (the file changed meanwhile).
func (s *Store) ClaimApproved(ctx context.Context, id int64) (Consumable, error) {
	var out Consumable
	err := s.tx(ctx, func(tx *sql.Tx) error {
		r, err := requestTx(ctx, tx, id)
		if err != nil {
			return err
		}
		var consumed sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT file_hash, consumed_at FROM approvals WHERE id = ?`, id).Scan(&out.FileHash, &consumed); err != nil {
			return err
		}
		out.Request = r
		if r.Status != StatusApproved {
			if r.Status == StatusPending {
				return fmt.Errorf("request %d is still pending: a person has not decided it", id)
			}
			return &DecidedError{Request: r}
		}
		if consumed.Valid {
			return fmt.Errorf("request %d: %w at %s", id, ErrConsumed, fromMS(consumed.Int64).Format("2006-01-02T15:04:05Z07:00"))
		}
		now := ms(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL`, now, id); err != nil {
			return err
		}
		return audit(ctx, tx, now, r.SessionID, id, ActorAgentinfra, SurfaceAgent, "request_consumed", nil)
	})
	return out, err
}

// ReleaseClaim undoes ClaimApproved (the change was not applied).
func (s *Store) ReleaseClaim(ctx context.Context, id int64, reason string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		r, err := requestTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET consumed_at = NULL WHERE id = ?`, id); err != nil {
			return err
		}
		return audit(ctx, tx, ms(s.now()), r.SessionID, id, ActorAgentinfra, SurfaceAgent, "request_not_applied", map[string]any{"reason": reason})
	})
}

// Unconsumed lists a session's requests that still wait on someone: pending
// ones, and approved agent-side edits (a file hash recorded) not yet
// applied. An agent-side client that restarted picks them up again.
func (s *Store) Unconsumed(ctx context.Context, sessionID int64) ([]Request, error) {
	return queryAll(ctx, s.db, scanRequest, `SELECT `+requestCols+` FROM approvals WHERE session_id = ?
		AND (status = 'pending' OR (status = 'approved' AND file_hash != '' AND consumed_at IS NULL)) ORDER BY id`, sessionID)
}
