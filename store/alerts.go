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
	// Host is the machine the alert is on when it is not this one: the
	// name of the agentinfra host (a Coder workspace) whose store holds it,
	// set by the supervision service that merged it (docs/coder.md); the
	// store never sets it.
	Host string `json:"host,omitempty"`
}

// Active reports whether the alert still waits (pending or nudged).
func (a Alert) Active() bool { return a.Status == AlertPending || a.Status == AlertNudged }

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
		return Alert{}, notFoundItem("stall alert", fmt.Sprintf("s%d", id), "`agentinfra inbox` lists the stall alerts that wait for an answer")
	}
	return a, err
}

// Alert reads one alert.
func (s *Store) Alert(ctx context.Context, id int64) (Alert, error) { return alertTx(ctx, s.db, id) }

// ActiveAlert is the session's active alert (ok false when none).
func (s *Store) ActiveAlert(ctx context.Context, sessionID int64) (Alert, bool, error) {
	return activeAlertTx(ctx, s.db, sessionID)
}

func activeAlertTx(ctx context.Context, q queryer, sessionID int64) (a Alert, ok bool, err error) {
	a, err = scanAlert(q.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE session_id = ? AND status IN ('pending','nudged')`, sessionID))
	if isNoRows(err) {
		return Alert{}, false, nil
	}
	return a, err == nil, err
}

// Alerts lists a session's alerts, oldest first.
func (s *Store) Alerts(ctx context.Context, sessionID int64) ([]Alert, error) {
	return queryAll(ctx, s.db, scanAlert, `SELECT `+alertCols+` FROM alerts WHERE session_id = ? ORDER BY id`, sessionID)
}

// RaiseAlert records a pending stall alert for a live session. A session
// that already has an active one gets it back with ErrPendingExists.
func (s *Store) RaiseAlert(ctx context.Context, sessionID int64, reason string) (Alert, error) {
	var out Alert
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		id, err := alertItems.raiseTx(ctx, tx, sessionID, ActorWatchdog, now, map[string]any{"reason": reason},
			`INSERT INTO alerts (session_id, status, raised_at, updated_at, reason) VALUES (?, 'pending', ?, ?, ?)`, sessionID, now, now, reason)
		if errors.Is(err, ErrPendingExists) {
			if cur, ok, rerr := activeAlertTx(ctx, tx, sessionID); rerr == nil && ok {
				out = cur
				return fmt.Errorf("%w: session %d has stall alert s%d", ErrPendingExists, sessionID, cur.ID)
			}
		}
		if err != nil {
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

// AlertActions lists the actions on an alert.
var AlertActions = []string{AlertNudge, AlertDismiss, AlertStop}

// DecideAlert is the compare-and-set of an action on an alert (answerTx):
// it applies only while the alert is active; the loser gets a
// *DecidedError. A stop also terminates the session (its run ends; what it
// waited on is closed).
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
		return Alert{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "action", Value: d.Action, Valid: AlertActions, Reason: "unknown action on a stall alert"}
	}
	nudge := 0
	if d.Action == AlertNudge {
		nudge = 1
	}
	out, err := s.answerAlert(ctx, d.ID, func(_ Alert, t time.Time) answer {
		now := ms(t)
		a := answer{id: d.ID, by: d.By, surface: d.Surface, person: person,
			set:    `status = ?, nudges = nudges + ?, updated_at = ?, decided_by = ?, surface = ?, reason = CASE WHEN ? = '' THEN reason ELSE ? END`,
			args:   []any{status, nudge, now, d.By, d.Surface, d.Reason, d.Reason},
			action: "alert_" + d.Action, detail: map[string]any{"text": d.Text, "reason": d.Reason}}
		if d.Action == AlertNudge {
			// A person's nudge is queued (the supervisor delivers it); the
			// watchdog's own is recorded as delivered (it sends it itself).
			a.also = func(tx *sql.Tx, sessionID, now int64) error {
				st, delivered := "queued", any(nil)
				if !person {
					st, delivered = "delivered", now
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO steering (session_id, text, sent_by, surface, status, created_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					sessionID, d.Text, d.By, d.Surface, st, now, delivered)
				return err
			}
		}
		return a
	})
	if err != nil {
		return out, err
	}
	if d.Action == AlertStop {
		if _, err := s.SetSessionStatus(ctx, out.SessionID, Transition{To: SessionTerminated, By: d.By, Surface: d.Surface,
			Reason: fmt.Sprintf("stopped from stall alert s%d", out.ID)}); err != nil && !errors.Is(err, ErrBadTransition) {
			return out, err
		}
	}
	return out, nil
}

// answerAlert runs an answer of alert id (answerItem; an alert has no
// deadline).
func (s *Store) answerAlert(ctx context.Context, id int64, a func(cur Alert, now time.Time) answer) (Alert, error) {
	return answerItem(ctx, s, alertItems, id, alertTx, a, nil, func(a Alert) *DecidedError { return &DecidedError{Alert: a} })
}

// CloseAlert ends an active alert without a person: self_recovered (the
// agent spoke again), escalated (the nudges did not help), or dismissed
// (the watchdog was paused, the session ended). won is false when the
// alert was no longer active; the returned alert is then as it is.
func (s *Store) CloseAlert(ctx context.Context, id int64, status, reason string) (a Alert, won bool, err error) {
	if status != AlertSelfRecovered && status != AlertEscalated && status != AlertDismissed {
		return Alert{}, false, fmt.Errorf("CloseAlert: status %q is not self_recovered, escalated or dismissed", status)
	}
	return settled(s.answerAlert(ctx, id, func(cur Alert, t time.Time) answer {
		now := ms(t)
		return answer{id: id, by: ActorWatchdog, surface: SurfaceSupervisor,
			set:  `status = ?, updated_at = ?, decided_by = ?, surface = ?, reason = ?`,
			args: []any{status, now, ActorWatchdog, SurfaceSupervisor, reason}, action: "alert_" + status, detail: map[string]any{"nudges": cur.Nudges, "reason": reason}}
	}))
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
	return queryAll(ctx, s.db, func(sc scanner) (v AlertView, err error) {
		v.Alert, err = scanAlert(withMore{sc, []any{&v.Owner, &v.CLI, &v.Agent, &v.TaskID, &v.LastTool}})
		return v, err
	}, `SELECT `+prefixed("a.", alertCols)+`, s.owner, s.cli, s.agent, s.task_id, s.last_tool
		FROM alerts a JOIN sessions s ON s.id = a.session_id WHERE a.status IN ('pending','nudged') ORDER BY a.id`)
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
// alert.
func (s *Store) SetWatchdogPaused(ctx context.Context, sessionID int64, paused bool, by, surface string) error {
	if err := checkPerson(by, surface); err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		ses, err := sessionTx(ctx, tx, sessionID)
		if err != nil {
			return err
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
