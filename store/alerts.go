package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Stall alert statuses: pending → nudged | self_recovered | escalated |
// dismissed. pending and nudged are active (one active alert per session,
// a unique index); the others are final.
const (
	AlertPending       = "pending"
	AlertNudged        = "nudged"
	AlertSelfRecovered = "self_recovered"
	AlertEscalated     = "escalated"
	AlertDismissed     = "dismissed"
)

// ActorWatchdog is the stall watchdog, as an actor of the audit log.
const ActorWatchdog = "watchdog"

// Alert is one stall alert: a session's agent was silent longer than the
// watchdog's threshold.
type Alert struct {
	ID        int64     `json:"id"`
	SessionID int64     `json:"session_id"`
	Status    string    `json:"status"`
	Nudges    int       `json:"nudges"`
	RaisedAt  time.Time `json:"raised_at"`
	UpdatedAt time.Time `json:"updated_at"`
	DecidedBy string    `json:"decided_by,omitempty"`
	Surface   string    `json:"surface,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

// Active reports whether the alert still waits (pending or nudged).
func (a Alert) Active() bool { return a.Status == AlertPending || a.Status == AlertNudged }

// AlertDecidedError is the answer to an alert action that lost: the alert
// was no longer active.
type AlertDecidedError struct{ Alert Alert }

func (e *AlertDecidedError) Error() string {
	a := e.Alert
	return fmt.Sprintf("stall alert s%d is already %s via %s by %s at %s", a.ID, a.Status, orDashS(a.Surface), Handle(a.DecidedBy), a.UpdatedAt.Format(time.RFC3339))
}

func orDashS(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const alertCols = `id, session_id, status, nudges, raised_at, updated_at, decided_by, surface, reason`

func scanAlert(sc scanner) (Alert, error) {
	var a Alert
	var raised, updated int64
	err := sc.Scan(&a.ID, &a.SessionID, &a.Status, &a.Nudges, &raised, &updated, &a.DecidedBy, &a.Surface, &a.Reason)
	a.RaisedAt, a.UpdatedAt = fromMS(raised), fromMS(updated)
	return a, err
}

func alertTx(ctx context.Context, q queryer, id int64) (Alert, error) {
	a, err := scanAlert(q.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = ?`, id))
	if isNoRows(err) {
		return Alert{}, fmt.Errorf("stall alert s%d: %w", id, ErrNotFound)
	}
	return a, err
}

// Alert reads one alert.
func (s *Store) Alert(ctx context.Context, id int64) (Alert, error) { return alertTx(ctx, s.db, id) }

// ActiveAlert is the session's active alert (ok false when none).
func (s *Store) ActiveAlert(ctx context.Context, sessionID int64) (a Alert, ok bool, err error) {
	a, err = scanAlert(s.db.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE session_id = ? AND status IN ('pending','nudged')`, sessionID))
	if isNoRows(err) {
		return Alert{}, false, nil
	}
	return a, err == nil, err
}

// Alerts lists a session's alerts, oldest first.
func (s *Store) Alerts(ctx context.Context, sessionID int64) ([]Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Alert
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// RaiseAlert records a pending stall alert for a live session. A session
// that already has an active one gets it back with ErrPendingExists.
func (s *Store) RaiseAlert(ctx context.Context, sessionID int64, reason string) (Alert, error) {
	var out Alert
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ses, err := sessionTx(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if ses.Ended() {
			return fmt.Errorf("%w: session %d is %s", ErrBadTransition, ses.ID, ses.Status)
		}
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO alerts (session_id, status, raised_at, updated_at, reason) VALUES (?, 'pending', ?, ?, ?)`,
			sessionID, now, now, reason)
		if isUnique(err) {
			cur, err := scanAlert(tx.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE session_id = ? AND status IN ('pending','nudged')`, sessionID))
			if err != nil {
				return err
			}
			out = cur
			return fmt.Errorf("%w: session %d has stall alert s%d", ErrPendingExists, sessionID, cur.ID)
		}
		if err != nil {
			return fmt.Errorf("raise a stall alert: %w", err)
		}
		id, _ := res.LastInsertId()
		if err := audit(ctx, tx, now, sessionID, 0, ActorWatchdog, SurfaceSupervisor, "alert_raised", map[string]any{"alert": id, "reason": reason}); err != nil {
			return err
		}
		out, err = alertTx(ctx, tx, id)
		return err
	})
	return out, err
}

// Alert actions.
const (
	AlertNudge   = "nudge"   // send the agent a message (the alert becomes nudged)
	AlertDismiss = "dismiss" // the silence is fine (a person says so)
	AlertStop    = "stop"    // stop the session's run
)

// AlertDecision is an action on an active alert, by a person or by the
// watchdog itself (By = ActorWatchdog, Surface = SurfaceSupervisor).
type AlertDecision struct {
	ID      int64
	Action  string // AlertNudge, AlertDismiss or AlertStop
	By      string
	Surface string
	// Text is the nudge's message. A person's nudge is queued as a steering
	// message (the supervisor delivers it); the watchdog's own is recorded
	// as delivered (the watchdog sends it itself).
	Text   string
	Reason string
}

// DecideAlert is the compare-and-set of an action on an alert: it applies
// only while the alert is active; the loser gets an *AlertDecidedError.
// People must be the session's owner or an operator (ErrNotAllowed). A stop
// also terminates the session (its run ends; what it waited on is closed).
func (s *Store) DecideAlert(ctx context.Context, d AlertDecision) (Alert, error) {
	person := d.By != ActorWatchdog
	if person {
		if err := checkPerson(d.By, d.Surface); err != nil {
			return Alert{}, err
		}
	} else {
		d.Surface = SurfaceSupervisor
	}
	var status string
	switch d.Action {
	case AlertNudge:
		status = AlertNudged
	case AlertDismiss, AlertStop:
		status = AlertDismissed
	default:
		return Alert{}, fmt.Errorf("unknown alert action %q: use nudge, dismiss or stop", d.Action)
	}
	var out Alert
	var lost error
	err := s.tx(ctx, func(tx *sql.Tx) error {
		a, err := alertTx(ctx, tx, d.ID)
		if err != nil {
			return err
		}
		ses, err := sessionTx(ctx, tx, a.SessionID)
		if err != nil {
			return err
		}
		if person && !s.mayDecide(d.By, ses) {
			return notAllowed(d.By, ses, fmt.Sprintf("stall alert s%d", a.ID))
		}
		now := ms(s.now())
		nudge := 0
		if d.Action == AlertNudge {
			nudge = 1
		}
		res, err := tx.ExecContext(ctx, `UPDATE alerts SET status = ?, nudges = nudges + ?, updated_at = ?, decided_by = ?, surface = ?, reason = CASE WHEN ? = '' THEN reason ELSE ? END
			WHERE id = ? AND status IN ('pending','nudged')`, status, nudge, now, d.By, d.Surface, d.Reason, d.Reason, d.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			out, lost = a, &AlertDecidedError{Alert: a}
			return nil
		}
		if d.Action == AlertNudge {
			st := "queued"
			var delivered any
			if !person {
				st, delivered = "delivered", now
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO steering (session_id, text, sent_by, surface, status, created_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				a.SessionID, d.Text, d.By, d.Surface, st, now, delivered); err != nil {
				return err
			}
		}
		if err := audit(ctx, tx, now, a.SessionID, 0, d.By, d.Surface, "alert_"+d.Action, map[string]any{"alert": a.ID, "text": d.Text, "reason": d.Reason}); err != nil {
			return err
		}
		out, err = alertTx(ctx, tx, d.ID)
		return err
	})
	if err != nil {
		return Alert{}, err
	}
	if lost == nil && d.Action == AlertStop {
		if _, err := s.SetSessionStatus(ctx, out.SessionID, Transition{To: SessionTerminated, By: d.By, Surface: d.Surface,
			Reason: fmt.Sprintf("stopped from stall alert s%d", out.ID)}); err != nil && !errors.Is(err, ErrBadTransition) {
			return out, err
		}
	}
	return out, lost
}

// CloseAlert ends an active alert without a person: self_recovered (the
// agent spoke again), escalated (the nudges did not help), or dismissed
// (the watchdog was paused, the session ended). won is false when the
// alert was no longer active; the returned alert is then as it is.
func (s *Store) CloseAlert(ctx context.Context, id int64, status, reason string) (a Alert, won bool, err error) {
	if status != AlertSelfRecovered && status != AlertEscalated && status != AlertDismissed {
		return Alert{}, false, fmt.Errorf("CloseAlert: status %q is not self_recovered, escalated or dismissed", status)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE alerts SET status = ?, updated_at = ?, decided_by = ?, surface = ?, reason = ? WHERE id = ? AND status IN ('pending','nudged')`,
			status, now, ActorWatchdog, SurfaceSupervisor, reason, id)
		if err != nil {
			return err
		}
		if a, err = alertTx(ctx, tx, id); err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			won = true
			return audit(ctx, tx, now, a.SessionID, 0, ActorWatchdog, SurfaceSupervisor, "alert_"+status, map[string]any{"alert": id, "nudges": a.Nudges, "reason": reason})
		}
		return nil
	})
	return a, won, err
}

// AlertView is an active alert with its session, for inboxes.
type AlertView struct {
	Alert
	Owner    string `json:"owner"`
	CLI      string `json:"cli"`
	Agent    string `json:"agent,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	LastTool string `json:"last_tool,omitempty"`
}

// ActiveAlerts lists the active alerts of every session, oldest first.
func (s *Store) ActiveAlerts(ctx context.Context) ([]AlertView, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("a.", alertCols)+`, s.owner, s.cli, s.agent, s.task_id, s.last_tool
		FROM alerts a JOIN sessions s ON s.id = a.session_id WHERE a.status IN ('pending','nudged') ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AlertView
	for rows.Next() {
		var v AlertView
		var raised, updated int64
		a := &v.Alert
		if err := rows.Scan(&a.ID, &a.SessionID, &a.Status, &a.Nudges, &raised, &updated, &a.DecidedBy, &a.Surface, &a.Reason,
			&v.Owner, &v.CLI, &v.Agent, &v.TaskID, &v.LastTool); err != nil {
			return nil, err
		}
		a.RaisedAt, a.UpdatedAt = fromMS(raised), fromMS(updated)
		out = append(out, v)
	}
	return out, rows.Err()
}

// WatchdogPaused tells whether a person paused the session's watchdog.
func (s *Store) WatchdogPaused(ctx context.Context, sessionID int64) (bool, error) {
	var p bool
	err := s.db.QueryRowContext(ctx, `SELECT watchdog_paused FROM sessions WHERE id = ?`, sessionID).Scan(&p)
	if isNoRows(err) {
		return false, fmt.Errorf("session %d: %w", sessionID, ErrNotFound)
	}
	return p, err
}

// SetWatchdogPaused pauses or resumes the session's stall watchdog (a
// person expecting a long silence: a build). Pausing dismisses the active
// alert. Only the owner or an operator may.
func (s *Store) SetWatchdogPaused(ctx context.Context, sessionID int64, paused bool, by, surface string) error {
	if err := checkPerson(by, surface); err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		ses, err := sessionTx(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if !s.mayDecide(by, ses) {
			return notAllowed(by, ses, fmt.Sprintf("the watchdog of session %d", ses.ID))
		}
		if ses.Ended() {
			return fmt.Errorf("%w: session %d is %s", ErrBadTransition, ses.ID, ses.Status)
		}
		now := ms(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET watchdog_paused = ?, updated_at = ? WHERE id = ?`, paused, now, sessionID); err != nil {
			return err
		}
		action := "watchdog_resumed"
		if paused {
			action = "watchdog_paused"
			if _, err := tx.ExecContext(ctx, `UPDATE alerts SET status = 'dismissed', updated_at = ?, decided_by = ?, surface = ?, reason = 'the watchdog was paused'
				WHERE session_id = ? AND status IN ('pending','nudged')`, now, by, surface, sessionID); err != nil {
				return err
			}
		}
		return audit(ctx, tx, now, sessionID, 0, by, surface, action, nil)
	})
}

// Unwrap makes a lost alert action a conflict (exit 4, HTTP 409).
func (e *AlertDecidedError) Unwrap() error { return agenterr.ErrConflict }
