package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Session statuses: created → active ⇄ paused → terminated | interrupted.
const (
	SessionCreated     = "created"
	SessionActive      = "active"
	SessionPaused      = "paused"
	SessionTerminated  = "terminated"
	SessionInterrupted = "interrupted"
)

// Session modes: where its requests may be answered.
const (
	ModeLocal  = "local"  // terminal and web page only
	ModeRemote = "remote" // also Slack
	ModeHybrid = "hybrid"
)

// Modes lists the session modes.
var Modes = []string{ModeLocal, ModeRemote, ModeHybrid}

// Session is one supervised run.
type Session struct {
	ID        int64      `json:"id"`
	Owner     string     `json:"owner"`
	Workspace string     `json:"workspace"`
	Status    string     `json:"status"`
	Mode      string     `json:"mode"`
	CLI       string     `json:"cli"`
	RunID     string     `json:"run_id,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	TaskID    string     `json:"task_id,omitempty"`
	Title     string     `json:"title,omitempty"`
	LastTool  string     `json:"last_tool,omitempty"`
	Progress  string     `json:"progress,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	EndReason string     `json:"end_reason,omitempty"`
	// EndedBy and EndSurface say who ended the session and how: a
	// person's stop (terminal, web, slack), or agentinfra's end of the run.
	EndedBy    string `json:"ended_by,omitempty"`
	EndSurface string `json:"end_surface,omitempty"`
	// Channel is where the remote surface posts this session ("" = the
	// config's channel).
	Channel string `json:"channel,omitempty"`
	// Host is the machine the session is on when it is not this one: the
	// name of the agentinfra host (a Coder workspace) whose store holds it,
	// set by the supervision service that merged it (docs/coder.md); the
	// store never sets it.
	Host string `json:"host,omitempty"`
}

// Live reports whether the session holds a place (active or paused).
func (s Session) Live() bool { return s.Status == SessionActive || s.Status == SessionPaused }

// StoppedByPerson reports whether a person stopped the session (`session
// stop`, the console's or Slack's stop, a stall alert answered stop) rather
// than its run ending by itself.
func (s Session) StoppedByPerson() bool {
	return s.Status == SessionTerminated && slices.Contains(PeopleSurfaces, s.EndSurface) && s.EndedBy != ""
}

// StopText says who stopped the session, how and why: "session stopped by
// @ana via terminal: no longer needed" ("" when no person stopped it).
func (s Session) StopText() string {
	if !s.StoppedByPerson() {
		return ""
	}
	t := fmt.Sprintf("session stopped by %s via %s", Handle(s.EndedBy), s.EndSurface)
	if r := strings.TrimSpace(s.EndReason); r != "" {
		t += ": " + r
	}
	return t
}

// Ended reports whether the session is over.
func (s Session) Ended() bool {
	return s.Status == SessionTerminated || s.Status == SessionInterrupted
}

// NewSession is what CreateSession needs.
type NewSession struct {
	Owner     string
	Workspace string
	Mode      string // "" = local
	CLI       string
	RunID     string
	Agent     string
	TaskID    string
	Title     string
	Channel   string // the remote surface's channel ("" = the config's)
}

const sessionCols = `id, owner, workspace, status, mode, cli, run_id, agent, task_id, title, last_tool, progress, created_at, updated_at, ended_at, end_reason, channel, ended_by, end_surface`

type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (Session, error) {
	var s Session
	var created, updated int64
	var ended sql.NullInt64
	err := sc.Scan(&s.ID, &s.Owner, &s.Workspace, &s.Status, &s.Mode, &s.CLI, &s.RunID, &s.Agent, &s.TaskID, &s.Title,
		&s.LastTool, &s.Progress, &created, &updated, &ended, &s.EndReason, &s.Channel, &s.EndedBy, &s.EndSurface)
	s.CreatedAt, s.UpdatedAt, s.EndedAt = fromMS(created), fromMS(updated), fromNullMS(ended)
	return s, err
}

// CreateSession records a new session (status created).
func (s *Store) CreateSession(ctx context.Context, n NewSession) (Session, error) {
	if n.Mode == "" {
		n.Mode = ModeLocal
	}
	if !slices.Contains(Modes, n.Mode) {
		return Session{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "mode", Value: n.Mode, Valid: Modes, Reason: "unknown session mode"}
	}
	if n.Owner == "" {
		return Session{}, agenterr.Invalidf("owner", "a session needs an owner")
	}
	var out Session
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (owner, workspace, status, mode, cli, run_id, agent, task_id, title, channel, created_at, updated_at)
			VALUES (?, ?, 'created', ?, ?, ?, ?, ?, ?, ?, ?, ?)`, n.Owner, n.Workspace, n.Mode, n.CLI, n.RunID, n.Agent, n.TaskID, n.Title, n.Channel, now, now)
		if err != nil {
			return fmt.Errorf("create a session: %w", err)
		}
		id, _ := res.LastInsertId()
		if err := audit(ctx, tx, now, id, 0, n.Owner, SurfaceSupervisor, "session_created", map[string]any{"cli": n.CLI, "mode": n.Mode, "task": n.TaskID, "agent": n.Agent}); err != nil {
			return err
		}
		out, err = sessionTx(ctx, tx, id)
		return err
	})
	return out, err
}

// Session reads one session.
func (s *Store) Session(ctx context.Context, id int64) (Session, error) {
	return sessionTx(ctx, s.db, id)
}

func sessionTx(ctx context.Context, q queryer, id int64) (Session, error) {
	ses, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if isNoRows(err) {
		return Session{}, notFound("session", id)
	}
	return ses, err
}

// SessionFilter selects sessions; the zero value lists all, newest first.
type SessionFilter struct {
	Statuses []string
	Limit    int
}

// Sessions lists sessions, newest first.
func (s *Store) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	q := `SELECT ` + sessionCols + ` FROM sessions`
	var args []any
	if len(f.Statuses) > 0 {
		q += ` WHERE status IN (?` + strings.Repeat(",?", len(f.Statuses)-1) + `)`
		for _, st := range f.Statuses {
			args = append(args, st)
		}
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return queryAll(ctx, s.db, scanSession, q, args...)
}

// transitions lists the statuses each status may go to.
var transitions = map[string][]string{
	SessionCreated: {SessionActive, SessionTerminated, SessionInterrupted},
	SessionActive:  {SessionPaused, SessionTerminated, SessionInterrupted},
	SessionPaused:  {SessionActive, SessionTerminated, SessionInterrupted},
}

// Transition is a change of a session's status.
type Transition struct {
	To      string
	By      string
	Surface string
	Reason  string
	// From, when set, makes the move a compare-and-set: it happens only
	// from one of these statuses, and a session in another one (To
	// included: moved there by another process) is ErrBadTransition. Of
	// processes racing to make the same move, one wins and knows it.
	From []string
}

// SetSessionStatus moves a session to t.To when its status allows it (who
// may ask is package supervision's rule). Going from created to active checks max_concurrent_sessions in the same
// transaction (*LimitError). Ending a session interrupts its pending
// request. Moving to the status it has changes nothing.
func (s *Store) SetSessionStatus(ctx context.Context, id int64, t Transition) (Session, error) {
	var out Session
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(t.From) > 0 && !slices.Contains(t.From, cur.Status) {
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("session %d is %s already, not %s", id, cur.Status, strings.Join(t.From, " or ")), Err: ErrBadTransition}
		}
		if cur.Status == t.To {
			out = cur
			return nil
		}
		if !slices.Contains(transitions[cur.Status], t.To) {
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("session %d is %s and cannot become %s", id, cur.Status, t.To), Err: ErrBadTransition}
		}
		if cur.Status == SessionCreated && t.To == SessionActive && s.opts.MaxSessions > 0 {
			live, err := liveSessions(ctx, tx)
			if err != nil {
				return err
			}
			if len(live) >= s.opts.MaxSessions {
				return &LimitError{Limit: s.opts.MaxSessions, Holding: live}
			}
		}
		now := ms(s.now())
		ended := any(nil)
		if t.To == SessionTerminated || t.To == SessionInterrupted {
			ended = now
			if err := endWaitingTx(ctx, tx, id, now, t); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET status = ?, updated_at = ?, ended_at = COALESCE(?, ended_at), end_reason = CASE WHEN ? IS NULL THEN end_reason ELSE ? END,
			ended_by = CASE WHEN ? IS NULL THEN ended_by ELSE ? END, end_surface = CASE WHEN ? IS NULL THEN end_surface ELSE ? END WHERE id = ?`,
			t.To, now, ended, ended, t.Reason, ended, t.By, ended, orSurface(t.Surface), id); err != nil {
			return err
		}
		if err := audit(ctx, tx, now, id, 0, t.By, orSurface(t.Surface), "session_"+t.To, map[string]any{"from": cur.Status, "reason": t.Reason}); err != nil {
			return err
		}
		out, err = sessionTx(ctx, tx, id)
		return err
	})
	return out, err
}

func orSurface(s string) string {
	if s == "" {
		return SurfaceSupervisor
	}
	return s
}

func liveSessions(ctx context.Context, tx *sql.Tx) ([]Session, error) {
	return queryAll(ctx, tx, scanSession, `SELECT `+sessionCols+` FROM sessions WHERE status IN ('active','paused') ORDER BY id`)
}

// SetProgress records the session's last tool and progress line (either
// may be "" to keep it).
func (s *Store) SetProgress(ctx context.Context, id int64, lastTool, progress string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET last_tool = CASE WHEN ? = '' THEN last_tool ELSE ? END,
		progress = CASE WHEN ? = '' THEN progress ELSE ? END, updated_at = ? WHERE id = ?`,
		lastTool, lastTool, progress, progress, ms(s.now()), id)
	return err
}

// SetSessionMode changes where a live session's requests may be answered
// (local, remote, hybrid), recorded in the audit log as made by who
// through surface.
func (s *Store) SetSessionMode(ctx context.Context, id int64, mode, by, surface string) (Session, error) {
	if !slices.Contains(Modes, mode) {
		return Session{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "mode", Value: mode, Valid: Modes, Reason: "unknown session mode"}
	}
	var out Session
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Ended() {
			return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("session %d is %s: its mode no longer matters", id, cur.Status), Err: ErrBadTransition}
		}
		if cur.Mode == mode {
			out = cur
			return nil
		}
		now := ms(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET mode = ?, updated_at = ? WHERE id = ?`, mode, now, id); err != nil {
			return err
		}
		if err := audit(ctx, tx, now, id, 0, by, orSurface(surface), "session_mode", map[string]any{"from": cur.Mode, "to": mode}); err != nil {
			return err
		}
		out, err = sessionTx(ctx, tx, id)
		return err
	})
	return out, err
}
