package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Continuation prompt kinds: why the operator is asked when a turn ends.
const (
	PromptContinuation    = "continuation"     // the agent stopped short
	PromptClarification   = "clarification"    // its last message asks a question
	PromptErrorRecovery   = "error_recovery"   // the turn ended on an error
	PromptResourceWarning = "resource_warning" // a budget (turns, time, tokens) is near
)

// PromptKinds lists the kinds.
var PromptKinds = []string{PromptContinuation, PromptClarification, PromptErrorRecovery, PromptResourceWarning}

// Prompt statuses: pending → continued | refined | stopped | expired |
// withdrawn.
const (
	PromptPending   = "pending"
	PromptContinued = "continued"
	PromptRefined   = "refined"
	PromptStopped   = "stopped"
	PromptExpired   = "expired"
	PromptWithdrawn = "withdrawn"
)

// Prompt actions (what a person answers).
const (
	ActionContinue = "continue"
	ActionRefine   = "refine"
	ActionStop     = "stop"
)

// Prompt is one continuation prompt: a turn ended, and the operator says
// how the run goes on.
type Prompt struct {
	ID          int64      `json:"id"`
	SessionID   int64      `json:"session_id"`
	Kind        string     `json:"kind"`
	Text        string     `json:"text,omitempty"`
	Status      string     `json:"status"`
	Instruction string     `json:"instruction,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
	DecidedBy   string     `json:"decided_by,omitempty"`
	Surface     string     `json:"surface,omitempty"`
	Reason      string     `json:"reason,omitempty"`
}

// PromptDecidedError is the answer to a decision on a prompt that lost: it
// had already been decided, timed out or been withdrawn.
type PromptDecidedError struct{ Prompt Prompt }

func (e *PromptDecidedError) Error() string {
	p := e.Prompt
	at := "?"
	if p.DecidedAt != nil {
		at = p.DecidedAt.Format(time.RFC3339)
	}
	switch {
	case p.Surface == SurfaceTimeout:
		return fmt.Sprintf("prompt p%d already timed out at %s (%s)", p.ID, at, p.Status)
	case p.Status == PromptWithdrawn:
		return fmt.Sprintf("prompt p%d was withdrawn at %s (%s)", p.ID, at, p.Reason)
	}
	return fmt.Sprintf("prompt p%d already %s via %s by %s at %s", p.ID, p.Status, p.Surface, Handle(p.DecidedBy), at)
}

// Is makes errors.Is(err, ErrExpired) true for a prompt that timed out.
func (e *PromptDecidedError) Is(target error) bool {
	return target == ErrExpired && e.Prompt.Surface == SurfaceTimeout
}

const promptCols = `id, session_id, kind, text, status, instruction, created_at, expires_at, decided_at, decided_by, surface, reason`

func scanPrompt(sc scanner) (Prompt, error) {
	var p Prompt
	var created int64
	var expires, decided sql.NullInt64
	err := sc.Scan(&p.ID, &p.SessionID, &p.Kind, &p.Text, &p.Status, &p.Instruction, &created, &expires, &decided, &p.DecidedBy, &p.Surface, &p.Reason)
	p.CreatedAt, p.ExpiresAt, p.DecidedAt = fromMS(created), fromNullMS(expires), fromNullMS(decided)
	return p, err
}

func promptTx(ctx context.Context, q queryer, id int64) (Prompt, error) {
	p, err := scanPrompt(q.QueryRowContext(ctx, `SELECT `+promptCols+` FROM prompts WHERE id = ?`, id))
	if isNoRows(err) {
		return Prompt{}, fmt.Errorf("prompt p%d: %w", id, ErrNotFound)
	}
	return p, err
}

// Prompt reads one prompt.
func (s *Store) Prompt(ctx context.Context, id int64) (Prompt, error) { return promptTx(ctx, s.db, id) }

// Prompts lists a session's prompts, oldest first.
func (s *Store) Prompts(ctx context.Context, sessionID int64) ([]Prompt, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+promptCols+` FROM prompts WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Prompt
	for rows.Next() {
		p, err := scanPrompt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// NewPrompt is what RaisePrompt needs. Timeout 0 means it never times out.
type NewPrompt struct {
	SessionID int64
	Kind      string
	Text      string // what the operator reads: the agent's last message, the error, the budget
	Timeout   time.Duration
}

// RaisePrompt records a pending prompt of a live session; a session that
// already has one gets ErrPendingExists.
func (s *Store) RaisePrompt(ctx context.Context, n NewPrompt) (Prompt, error) {
	if !contains(PromptKinds, n.Kind) {
		return Prompt{}, fmt.Errorf("unknown prompt kind %q: use one of %s", n.Kind, strings.Join(PromptKinds, ", "))
	}
	var out Prompt
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ses, err := sessionTx(ctx, tx, n.SessionID)
		if err != nil {
			return err
		}
		if ses.Ended() {
			return fmt.Errorf("%w: session %d is %s", ErrBadTransition, ses.ID, ses.Status)
		}
		now := s.now()
		var expires any
		if n.Timeout > 0 {
			expires = ms(now.Add(n.Timeout))
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO prompts (session_id, kind, text, status, created_at, expires_at) VALUES (?, ?, ?, 'pending', ?, ?)`,
			n.SessionID, n.Kind, n.Text, ms(now), expires)
		if isUnique(err) {
			return fmt.Errorf("%w: session %d already has a pending prompt", ErrPendingExists, n.SessionID)
		}
		if err != nil {
			return fmt.Errorf("raise a prompt: %w", err)
		}
		id, _ := res.LastInsertId()
		if err := audit(ctx, tx, ms(now), n.SessionID, 0, ActorAgentinfra, SurfaceSupervisor, "prompt_raised", map[string]any{"prompt": id, "kind": n.Kind}); err != nil {
			return err
		}
		out, err = promptTx(ctx, tx, id)
		return err
	})
	return out, err
}

// PromptDecision is a person's answer to a prompt.
type PromptDecision struct {
	ID          int64
	Action      string // ActionContinue, ActionRefine or ActionStop
	Instruction string // refine: the new instruction, sent as the next message
	By          string
	Surface     string
}

// DecidePrompt is the compare-and-set of a decision on a prompt, as for
// approval requests: of any number of answers exactly one wins, the others
// get a *PromptDecidedError; an answer after the deadline applies the
// timeout instead (continue, or expired for error_recovery, which never
// continues by itself) and is refused with an error that Is ErrExpired.
// Only the session's owner and operators may decide.
func (s *Store) DecidePrompt(ctx context.Context, d PromptDecision) (Prompt, error) {
	if err := checkPerson(d.By, d.Surface); err != nil {
		return Prompt{}, err
	}
	var status string
	switch d.Action {
	case ActionContinue:
		status = PromptContinued
	case ActionRefine:
		status = PromptRefined
		if strings.TrimSpace(d.Instruction) == "" {
			return Prompt{}, agenterr.New(agenterr.Invalid, "refine needs the new instruction")
		}
	case ActionStop:
		status = PromptStopped
	default:
		return Prompt{}, fmt.Errorf("unknown answer %q: use continue, refine or stop", d.Action)
	}
	var out Prompt
	var lost error
	err := s.tx(ctx, func(tx *sql.Tx) error {
		p, err := promptTx(ctx, tx, d.ID)
		if err != nil {
			return err
		}
		ses, err := sessionTx(ctx, tx, p.SessionID)
		if err != nil {
			return err
		}
		if !s.mayDecide(d.By, ses) {
			return notAllowed(d.By, ses, fmt.Sprintf("prompt p%d", p.ID))
		}
		now := s.now()
		res, err := tx.ExecContext(ctx, `UPDATE prompts SET status = ?, instruction = ?, decided_at = ?, decided_by = ?, surface = ?
			WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)`,
			status, d.Instruction, ms(now), d.By, d.Surface, d.ID, ms(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if err := audit(ctx, tx, ms(now), p.SessionID, 0, d.By, d.Surface, "prompt_"+status, map[string]any{"prompt": p.ID, "instruction": d.Instruction}); err != nil {
				return err
			}
			out, err = promptTx(ctx, tx, d.ID)
			return err
		}
		if p.Status == PromptPending { // its deadline passed: the timeout's outcome, never the late answer
			if p, err = timeoutPromptTx(ctx, tx, p, now); err != nil {
				return err
			}
		}
		out, lost = p, &PromptDecidedError{Prompt: p}
		return nil
	})
	if err != nil {
		return Prompt{}, err
	}
	return out, lost
}

// TimeoutPrompt applies a prompt's timeout (agentinfra's timer): it
// continues, except error_recovery, which expires (the run does not go on
// by itself). won is false when the prompt had been decided first.
func (s *Store) TimeoutPrompt(ctx context.Context, id int64) (p Prompt, won bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := promptTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Status != PromptPending {
			p = cur
			return nil
		}
		p, err = timeoutPromptTx(ctx, tx, cur, s.now())
		won = err == nil
		return err
	})
	return p, won, err
}

func timeoutPromptTx(ctx context.Context, tx *sql.Tx, p Prompt, now time.Time) (Prompt, error) {
	status := PromptContinued
	reason := "nobody answered"
	if p.ExpiresAt != nil {
		reason += " within " + p.ExpiresAt.Sub(p.CreatedAt).Round(time.Second).String()
	}
	if p.Kind == PromptErrorRecovery {
		status = PromptExpired
		reason += ": an error is never continued by itself"
	}
	if _, err := tx.ExecContext(ctx, `UPDATE prompts SET status = ?, decided_at = ?, decided_by = ?, surface = 'timeout', reason = ?
		WHERE id = ? AND status = 'pending'`, status, ms(now), ActorAgentinfra, reason, p.ID); err != nil {
		return p, err
	}
	if err := audit(ctx, tx, ms(now), p.SessionID, 0, ActorAgentinfra, SurfaceTimeout, "prompt_"+status, map[string]any{"prompt": p.ID, "reason": reason}); err != nil {
		return p, err
	}
	return promptTx(ctx, tx, p.ID)
}

// WithdrawPrompt closes a pending prompt that no longer applies (the agent
// went on: a steering message started a new turn). won is false when it had
// been decided first.
func (s *Store) WithdrawPrompt(ctx context.Context, id int64, reason string) (p Prompt, won bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE prompts SET status = 'withdrawn', decided_at = ?, decided_by = ?, surface = ?, reason = ? WHERE id = ? AND status = 'pending'`,
			now, ActorAgentinfra, SurfaceSupervisor, reason, id)
		if err != nil {
			return err
		}
		if p, err = promptTx(ctx, tx, id); err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			won = true
			return audit(ctx, tx, now, p.SessionID, 0, ActorAgentinfra, SurfaceSupervisor, "prompt_withdrawn", map[string]any{"prompt": id, "reason": reason})
		}
		return nil
	})
	return p, won, err
}

// PendingPrompt is the session's pending prompt (ok false when none).
func (s *Store) PendingPrompt(ctx context.Context, sessionID int64) (p Prompt, ok bool, err error) {
	p, err = scanPrompt(s.db.QueryRowContext(ctx, `SELECT `+promptCols+` FROM prompts WHERE session_id = ? AND status = 'pending'`, sessionID))
	if isNoRows(err) {
		return Prompt{}, false, nil
	}
	return p, err == nil, err
}

// WaitPrompt blocks until prompt id is no longer pending (decided, timed
// out or withdrawn, by any process) and returns it.
func (s *Store) WaitPrompt(ctx context.Context, id int64) (Prompt, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.Changes(wctx)
	if err != nil {
		return Prompt{}, err
	}
	for {
		p, err := s.Prompt(ctx, id)
		if err != nil || p.Status != PromptPending {
			return p, err
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case _, ok := <-changes:
			if !ok {
				return p, ctx.Err()
			}
		}
	}
}

// PromptView is a pending prompt with its session, for inboxes.
type PromptView struct {
	Prompt
	Owner  string `json:"owner"`
	CLI    string `json:"cli"`
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
}

// PendingPrompts lists the pending prompts of every session, oldest first.
func (s *Store) PendingPrompts(ctx context.Context) ([]PromptView, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("p.", promptCols)+`, s.owner, s.cli, s.agent, s.task_id
		FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE p.status = 'pending' ORDER BY p.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PromptView
	for rows.Next() {
		var v PromptView
		var created int64
		var expires, decided sql.NullInt64
		p := &v.Prompt
		if err := rows.Scan(&p.ID, &p.SessionID, &p.Kind, &p.Text, &p.Status, &p.Instruction, &created, &expires, &decided, &p.DecidedBy, &p.Surface, &p.Reason,
			&v.Owner, &v.CLI, &v.Agent, &v.TaskID); err != nil {
			return nil, err
		}
		p.CreatedAt, p.ExpiresAt, p.DecidedAt = fromMS(created), fromNullMS(expires), fromNullMS(decided)
		out = append(out, v)
	}
	return out, rows.Err()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Unwrap makes a lost decision on a prompt a conflict (exit 4, HTTP 409).
func (e *PromptDecidedError) Unwrap() error { return agenterr.ErrConflict }
