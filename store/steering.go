package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Steering message statuses: queued → delivered | dropped.
const (
	SteeringQueued    = "queued"
	SteeringDelivered = "delivered"
	SteeringDropped   = "dropped"
)

// Steering is a message an operator (or the watchdog) sends to a running
// session's agent: it is delivered as the next user message.
type Steering struct {
	ID          int64      `json:"id"`
	SessionID   int64      `json:"session_id"`
	Text        string     `json:"text"`
	SentBy      string     `json:"sent_by"`
	Surface     string     `json:"surface"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

const steeringCols = `id, session_id, text, sent_by, surface, status, created_at, delivered_at`

func scanSteering(sc scanner) (Steering, error) {
	var m Steering
	var created int64
	var delivered sql.NullInt64
	err := sc.Scan(&m.ID, &m.SessionID, &m.Text, &m.SentBy, &m.Surface, &m.Status, &created, &delivered)
	m.CreatedAt, m.DeliveredAt = fromMS(created), fromNullMS(delivered)
	return m, err
}

// Steer queues a message for a session that has not ended, from a person
// (package supervision says who may) or from the agent itself
// (SurfaceAgent: an agent-side client's wait_for_instruction).
func (s *Store) Steer(ctx context.Context, sessionID int64, text, by, surface string) (Steering, error) {
	if strings.TrimSpace(text) == "" {
		return Steering{}, agenterr.New(agenterr.Invalid, "a steering message needs text")
	}
	if surface != SurfaceAgent {
		if err := checkPerson(by, surface); err != nil {
			return Steering{}, err
		}
	}
	var out Steering
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ses, err := sessionTx(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if ses.Ended() {
			return fmt.Errorf("%w: session %d is %s: nobody would read the message", ErrBadTransition, ses.ID, ses.Status)
		}
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO steering (session_id, text, sent_by, surface, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)`,
			sessionID, text, by, surface, now)
		if err != nil {
			return err
		}
		id, _ := res.LastInsertId()
		if err := audit(ctx, tx, now, sessionID, 0, by, surface, "steering_queued", map[string]any{"steering": id, "text": text}); err != nil {
			return err
		}
		out, err = scanSteering(tx.QueryRowContext(ctx, `SELECT `+steeringCols+` FROM steering WHERE id = ?`, id))
		return err
	})
	return out, err
}

// QueuedSteering lists a session's messages not yet delivered, oldest first.
func (s *Store) QueuedSteering(ctx context.Context, sessionID int64) ([]Steering, error) {
	return s.steering(ctx, `WHERE session_id = ? AND status = 'queued' ORDER BY id`, sessionID)
}

// SteeringOf lists every message of a session, oldest first.
func (s *Store) SteeringOf(ctx context.Context, sessionID int64) ([]Steering, error) {
	return s.steering(ctx, `WHERE session_id = ? ORDER BY id`, sessionID)
}

func (s *Store) steering(ctx context.Context, where string, args ...any) ([]Steering, error) {
	return queryAll(ctx, s.db, scanSteering, `SELECT `+steeringCols+` FROM steering `+where, args...)
}

// ClaimSteering marks a queued message delivered before the supervisor
// hands it to the agent: of two deliverers only one wins (won false for the
// other), so a message is never sent twice.
func (s *Store) ClaimSteering(ctx context.Context, id int64) (won bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE steering SET status = 'delivered', delivered_at = ? WHERE id = ? AND status = 'queued'`, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			won = true
			var sid int64
			if err := tx.QueryRowContext(ctx, `SELECT session_id FROM steering WHERE id = ?`, id).Scan(&sid); err != nil {
				return err
			}
			return audit(ctx, tx, now, sid, 0, ActorAgentinfra, SurfaceSupervisor, "steering_delivered", map[string]any{"steering": id})
		}
		return nil
	})
	return won, err
}

// DropSteering marks a message that could not be delivered (the run had
// ended) as dropped, with the reason in the audit log.
func (s *Store) DropSteering(ctx context.Context, id int64, reason string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var sid int64
		if err := tx.QueryRowContext(ctx, `SELECT session_id FROM steering WHERE id = ?`, id).Scan(&sid); err != nil {
			if isNoRows(err) {
				return fmt.Errorf("steering message %d: %w", id, ErrNotFound)
			}
			return err
		}
		now := ms(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE steering SET status = 'dropped' WHERE id = ?`, id); err != nil {
			return err
		}
		return audit(ctx, tx, now, sid, 0, ActorAgentinfra, SurfaceSupervisor, "steering_dropped", map[string]any{"steering": id, "reason": reason})
	})
}

// ReassignSteering moves the messages of one session that never reached
// its agent — queued, or dropped when the session ended — to another, as
// queued (an agent-side client that came back as a new session after a
// restart: what a person told it is not lost). The move is in the audit log
// of both sessions.
func (s *Store) ReassignSteering(ctx context.Context, from, to int64) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE steering SET session_id = ?, status = 'queued' WHERE session_id = ? AND status IN ('queued', 'dropped') AND delivered_at IS NULL`, to, from)
		if err != nil {
			return err
		}
		if n, _ = res.RowsAffected(); n == 0 {
			return nil
		}
		now := ms(s.now())
		if err := audit(ctx, tx, now, from, 0, ActorAgentinfra, SurfaceSupervisor, "steering_moved", map[string]any{"to": to, "messages": n}); err != nil {
			return err
		}
		return audit(ctx, tx, now, to, 0, ActorAgentinfra, SurfaceSupervisor, "steering_moved", map[string]any{"from": from, "messages": n})
	})
	return int(n), err
}
