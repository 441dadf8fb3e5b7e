package store

import (
	"context"
	"database/sql"
)

// closeWaitingTx closes what waits on a session that ends: its pending
// continuation prompt is withdrawn, its active stall alert dismissed, its
// queued steering messages dropped (nobody is left to read them).
func closeWaitingTx(ctx context.Context, tx *sql.Tx, sessionID, now int64, t Transition) error {
	by, surface, reason := t.By, orSurface(t.Surface), "the session ended: "+t.Reason
	if _, err := tx.ExecContext(ctx, `UPDATE prompts SET status = 'withdrawn', decided_at = ?, decided_by = ?, surface = ?, reason = ?
		WHERE session_id = ? AND status = 'pending'`, now, by, surface, reason, sessionID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE alerts SET status = 'dismissed', updated_at = ?, decided_by = ?, surface = ?, reason = ?
		WHERE session_id = ? AND status IN ('pending','nudged')`, now, by, surface, reason, sessionID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE steering SET status = 'dropped' WHERE session_id = ? AND status = 'queued'`, sessionID)
	return err
}
