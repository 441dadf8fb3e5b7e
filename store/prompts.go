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
	// Host is the machine the prompt is on when it is not this one: the
	// name of the agentinfra host (a Coder workspace) whose store holds it,
	// set by the supervision service that merged it (docs/coder.md); the
	// store never sets it.
	Host string `json:"host,omitempty"`
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
		return Prompt{}, notFoundItem("prompt", fmt.Sprintf("p%d", id), "`agentinfra inbox` lists the prompts that wait for an answer")
	}
	return p, err
}

// Prompt reads one prompt.
func (s *Store) Prompt(ctx context.Context, id int64) (Prompt, error) { return promptTx(ctx, s.db, id) }

// Prompts lists a session's prompts, oldest first.
func (s *Store) Prompts(ctx context.Context, sessionID int64) ([]Prompt, error) {
	return queryAll(ctx, s.db, scanPrompt, `SELECT `+promptCols+` FROM prompts WHERE session_id = ? ORDER BY id`, sessionID)
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
	if !slices.Contains(PromptKinds, n.Kind) {
		return Prompt{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "kind", Value: n.Kind, Valid: PromptKinds, Reason: "unknown prompt kind"}
	}
	var out Prompt
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		var expires any
		if n.Timeout > 0 {
			expires = ms(now.Add(n.Timeout))
		}
		id, err := promptItems.raiseTx(ctx, tx, n.SessionID, ActorAgentinfra, ms(now), map[string]any{"kind": n.Kind},
			`INSERT INTO prompts (session_id, kind, text, status, created_at, expires_at) VALUES (?, ?, ?, 'pending', ?, ?)`,
			n.SessionID, n.Kind, n.Text, ms(now), expires)
		if err != nil {
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

// DecidePrompt is the compare-and-set of a decision on a prompt
// (answerTx), as for approval requests: of any number of answers exactly
// one wins, the others get a *DecidedError; an answer after the deadline
// applies the timeout instead (continue, or expired for error_recovery,
// which never continues by itself) and is refused with an error that Is
// ErrExpired.
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
		return Prompt{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "action", Value: d.Action, Valid: PromptActions, Reason: "unknown answer to a prompt"}
	}
	return s.answerPrompt(ctx, d.ID, func(_ Prompt, now time.Time) answer {
		return answer{id: d.ID, by: d.By, surface: d.Surface, person: true,
			set:    `status = ?, instruction = ?, decided_at = ?, decided_by = ?, surface = ?`,
			args:   []any{status, d.Instruction, ms(now), d.By, d.Surface},
			action: "prompt_" + status, detail: map[string]any{"instruction": d.Instruction}}
	})
}

// PromptActions lists the answers to a prompt.
var PromptActions = []string{ActionContinue, ActionRefine, ActionStop}

// answerPrompt runs an answer of prompt id (answerItem); its deadline
// applies the timeout's outcome, never the late answer.
func (s *Store) answerPrompt(ctx context.Context, id int64, a func(cur Prompt, now time.Time) answer) (Prompt, error) {
	return answerItem(ctx, s, promptItems, id, promptTx, a, promptTimeout, func(p Prompt) *DecidedError { return &DecidedError{Prompt: p} })
}

// promptTimeout is the outcome of prompt p's timeout (agentinfra's
// timer): it continues, except error_recovery, which expires (the run does
// not go on by itself).
func promptTimeout(p Prompt, now time.Time) answer {
	status := PromptContinued
	reason := "nobody answered"
	if p.ExpiresAt != nil {
		reason += " within " + p.ExpiresAt.Sub(p.CreatedAt).Round(time.Second).String()
	}
	if p.Kind == PromptErrorRecovery {
		status = PromptExpired
		reason += ": an error is never continued by itself"
	}
	return answer{id: p.ID, by: ActorAgentinfra, surface: SurfaceTimeout,
		set:  `status = ?, decided_at = ?, decided_by = ?, surface = 'timeout', reason = ?`,
		args: []any{status, ms(now), ActorAgentinfra, reason}, action: "prompt_" + status, detail: map[string]any{"reason": reason}}
}

// TimeoutPrompt applies a prompt's timeout (promptTimeout). won is false
// when the prompt had been decided first.
func (s *Store) TimeoutPrompt(ctx context.Context, id int64) (p Prompt, won bool, err error) {
	return settled(s.answerPrompt(ctx, id, promptTimeout))
}

// WithdrawPrompt closes a pending prompt that no longer applies (the agent
// went on: a steering message started a new turn). won is false when it had
// been decided first.
func (s *Store) WithdrawPrompt(ctx context.Context, id int64, reason string) (p Prompt, won bool, err error) {
	return settled(s.answerPrompt(ctx, id, func(_ Prompt, now time.Time) answer {
		return answer{id: id, by: ActorAgentinfra, surface: SurfaceSupervisor,
			set:  `status = 'withdrawn', decided_at = ?, decided_by = ?, surface = ?, reason = ?`,
			args: []any{ms(now), ActorAgentinfra, SurfaceSupervisor, reason}, action: "prompt_withdrawn", detail: map[string]any{"reason": reason}}
	}))
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
func (s *Store) WaitPrompt(ctx context.Context, id int64) (p Prompt, err error) {
	err = s.waitSettled(ctx, func() (bool, error) {
		var err error
		p, err = s.Prompt(ctx, id)
		return p.Status != PromptPending, err
	})
	return p, err
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
	return queryAll(ctx, s.db, func(sc scanner) (v PromptView, err error) {
		v.Prompt, err = scanPrompt(withMore{sc, []any{&v.Owner, &v.CLI, &v.Agent, &v.TaskID}})
		return v, err
	}, `SELECT `+prefixed("p.", promptCols)+`, s.owner, s.cli, s.agent, s.task_id
		FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE p.status = 'pending' ORDER BY p.id`)
}
