package agentside

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// Forward is a continuation prompt an agent forwards to its operator.
type Forward struct {
	Kind string // a store.PromptKinds ("": continuation)
	Text string // what the operator reads: the question, the error, the summary
	// Timeout shortens supervision.prompts.timeout (0: the config's).
	Timeout time.Duration
}

// Answer is the operator's answer to a forwarded prompt.
type Answer struct {
	PromptID  int64  `json:"prompt_id"`
	SessionID int64  `json:"session_id"`
	Kind      string `json:"kind"`
	// Status: continued, refined (Instruction is the new instruction),
	// stopped, expired (an error_recovery prompt nobody answered: it never
	// continues by itself), withdrawn.
	Status      string     `json:"status"`
	Instruction string     `json:"instruction,omitempty"`
	DecidedBy   string     `json:"decided_by,omitempty"`
	Surface     string     `json:"surface,omitempty"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
	Reason      string     `json:"reason,omitempty"`
}

func answerOf(p store.Prompt) Answer {
	return Answer{PromptID: p.ID, SessionID: p.SessionID, Kind: p.Kind, Status: p.Status, Instruction: p.Instruction, DecidedBy: p.DecidedBy,
		Surface: p.Surface, DecidedAt: p.DecidedAt, Reason: p.Reason}
}

// ForwardPrompt raises a continuation prompt and waits for the operator's
// answer (`agentinfra answer ID continue|stop|refine TEXT`, the console,
// Slack). On timeout it continues, except error_recovery, which expires.
func (c *Client) ForwardPrompt(ctx context.Context, f Forward, progress Progress) (Answer, error) {
	if f.Kind == "" {
		f.Kind = store.PromptContinuation
	}
	if !slices.Contains(store.PromptKinds, f.Kind) {
		return Answer{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "kind", Value: f.Kind, Valid: store.PromptKinds, Reason: "unknown prompt kind"}
	}
	if strings.TrimSpace(f.Text) == "" {
		return Answer{}, agenterr.Invalidf("text", "required: what the operator is to read (your question, the error, where you stand)")
	}
	conf, err := c.keepConfig()
	if err != nil {
		return Answer{}, err
	}
	st, ses, err := c.Session(ctx)
	if err != nil {
		return Answer{}, err
	}
	p, err := st.RaisePrompt(ctx, store.NewPrompt{SessionID: ses.ID, Kind: f.Kind, Text: f.Text, Timeout: shorter(time.Duration(conf.Prompts.Timeout), f.Timeout)})
	if err != nil {
		return Answer{}, err
	}
	var deadline time.Time
	if p.ExpiresAt != nil {
		deadline = *p.ExpiresAt
	}
	what := fmt.Sprintf("prompt p%d waits for the operator: agentinfra answer p%d continue|stop|refine TEXT", p.ID, p.ID)
	cur := p
	timedOut, err := c.waitFor(ctx, st, deadline, progress, what, func() (bool, error) {
		var err error
		cur, err = st.Prompt(ctx, p.ID)
		return err == nil && cur.Status != store.PromptPending, err
	})
	switch {
	case timedOut:
		if cur, _, err = st.TimeoutPrompt(context.WithoutCancel(ctx), p.ID); err != nil {
			return Answer{}, err
		}
	case err != nil && isCanceled(err):
		st.WithdrawPrompt(context.WithoutCancel(ctx), p.ID, "the MCP client cancelled forward_prompt")
		return Answer{}, err
	case err != nil:
		return Answer{}, err
	}
	return answerOf(cur), nil
}

// Instruction is the outcome of WaitForInstruction.
type Instruction struct {
	SessionID int64 `json:"session_id"`
	// Status: message (Message is the next steering message), timeout.
	Status  string          `json:"status"`
	Message *store.Steering `json:"message,omitempty"`
}

// WaitForInstruction blocks until a steering message is queued for the
// session (`agentinfra steer SESSION TEXT`, the console, Slack), marks it
// delivered and returns it; or until timeout (DefaultInstructionWait when 0).
func (c *Client) WaitForInstruction(ctx context.Context, timeout time.Duration, progress Progress) (Instruction, error) {
	st, ses, err := c.Session(ctx)
	if err != nil {
		return Instruction{}, err
	}
	if timeout <= 0 {
		timeout = DefaultInstructionWait
	}
	out := Instruction{SessionID: ses.ID, Status: "timeout"}
	what := fmt.Sprintf("session %d waits for an instruction: agentinfra steer %d TEXT", ses.ID, ses.ID)
	_, err = c.waitFor(ctx, st, deadlineOf(timeout), progress, what, func() (bool, error) {
		msgs, err := c.claimSteering(ctx, st, ses, 1)
		if err != nil || len(msgs) == 0 {
			return false, err
		}
		out.Status, out.Message = "message", &msgs[0]
		return true, nil
	})
	return out, err
}

// claimSteering marks up to max queued messages delivered (0: all) and
// returns them, oldest first.
func (c *Client) claimSteering(ctx context.Context, st *store.Store, ses store.Session, max int) ([]store.Steering, error) {
	queued, err := st.QueuedSteering(ctx, ses.ID)
	if err != nil {
		return nil, err
	}
	var out []store.Steering
	for _, m := range queued {
		won, err := st.ClaimSteering(ctx, m.ID)
		if err != nil {
			return out, err
		}
		if won {
			m.Status = store.SteeringDelivered
			out = append(out, m)
			if max > 0 && len(out) == max {
				break
			}
		}
	}
	return out, nil
}

// Beat is the outcome of a heartbeat.
type Beat struct {
	SessionID int64            `json:"session_id"`
	Status    string           `json:"status"` // the session's: active, paused
	Messages  []store.Steering `json:"messages"`
}

// Heartbeat stores the agent's progress snapshot as the session's progress
// (and its current tool), and returns the steering messages queued for it,
// now delivered.
func (c *Client) Heartbeat(ctx context.Context, progress, tool string) (Beat, error) {
	st, ses, err := c.Session(ctx)
	if err != nil {
		return Beat{}, err
	}
	if err := st.SetProgress(ctx, ses.ID, tool, oneLine(progress, 500)); err != nil {
		return Beat{}, err
	}
	msgs, err := c.claimSteering(ctx, st, ses, 0)
	if err != nil {
		return Beat{}, err
	}
	if msgs == nil {
		msgs = []store.Steering{}
	}
	return Beat{SessionID: ses.ID, Status: ses.Status, Messages: msgs}, nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// Log levels of RemoteLog.
var LogLevels = []string{"debug", "info", "warning", "error"}

// RemoteLog appends a line of the agent's own to the session's audit log.
func (c *Client) RemoteLog(ctx context.Context, level, message string) (store.Session, error) {
	if level == "" {
		level = "info"
	}
	if !slices.Contains(LogLevels, level) {
		return store.Session{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "level", Value: level, Valid: LogLevels, Reason: "unknown level"}
	}
	if strings.TrimSpace(message) == "" {
		return store.Session{}, agenterr.Invalidf("message", "required")
	}
	st, ses, err := c.Session(ctx)
	if err != nil {
		return store.Session{}, err
	}
	if len(message) > 8<<10 {
		message = message[:8<<10] + "…"
	}
	c.record(ctx, st, ses, 0, "agent_log", map[string]any{"level": level, "message": message})
	return ses, nil
}

// State is what an agent-side client needs after a restart.
type State struct {
	Session store.Session `json:"session"`
	// Previous is the session it recovered from (nil: none found).
	Previous *store.Session `json:"previous,omitempty"`
	// Requests are the previous and current sessions' requests still
	// open: pending, or approved edits not applied yet (accept_diff).
	Requests []store.Request `json:"requests"`
	// Prompt is a continuation prompt still pending.
	Prompt *store.Prompt `json:"prompt,omitempty"`
	// Checkpoint is the last checkpoint of either session.
	Checkpoint *store.Checkpoint `json:"checkpoint,omitempty"`
	// Progress is the last progress the previous session reported.
	Progress string `json:"progress,omitempty"`
	// MovedSteering counts the queued messages moved to this session.
	MovedSteering int `json:"moved_steering"`
}

// RecoverState finds the session this client had before a restart
// (previous, or else the newest other session of the same person and
// client name) and returns what is still open there; its queued steering
// messages move to the current session.
func (c *Client) RecoverState(ctx context.Context, previous int64) (State, error) {
	st, ses, err := c.Session(ctx)
	if err != nil {
		return State{}, err
	}
	out := State{Session: ses, Requests: []store.Request{}}
	var prev *store.Session
	if previous != 0 {
		p, err := st.Session(ctx, previous)
		if err != nil {
			return State{}, err
		}
		if p.CLI != CLI || strings.TrimPrefix(p.Owner, "@") != strings.TrimPrefix(c.svc.owner, "@") {
			return State{}, &agenterr.Error{Kind: agenterr.Forbidden, Err: supervision.ErrNotAllowed, Field: "previous_session",
				Reason: fmt.Sprintf("session %d is not one of %s's MCP clients' sessions", previous, store.Handle(c.svc.owner))}
		}
		prev = &p
	} else {
		all, err := st.Sessions(ctx, store.SessionFilter{Limit: 200})
		if err != nil {
			return State{}, err
		}
		for _, s := range all { // newest first
			if s.ID != ses.ID && s.CLI == CLI && s.Agent == c.name && strings.TrimPrefix(s.Owner, "@") == strings.TrimPrefix(c.svc.owner, "@") {
				prev = &s
				break
			}
		}
	}
	ids := []int64{ses.ID}
	if prev != nil && prev.ID != ses.ID {
		out.Previous, out.Progress = prev, prev.Progress
		ids = append([]int64{prev.ID}, ids...)
		if out.MovedSteering, err = st.ReassignSteering(ctx, prev.ID, ses.ID); err != nil {
			return State{}, err
		}
	}
	for _, id := range ids {
		reqs, err := st.Unconsumed(ctx, id)
		if err != nil {
			return State{}, err
		}
		out.Requests = append(out.Requests, reqs...)
		if p, ok, err := st.PendingPrompt(ctx, id); err != nil {
			return State{}, err
		} else if ok {
			out.Prompt = &p
		}
		cps, err := st.Checkpoints(ctx, id)
		if err != nil {
			return State{}, err
		}
		if len(cps) > 0 {
			out.Checkpoint = &cps[len(cps)-1]
		}
	}
	if out.Progress == "" {
		out.Progress = ses.Progress
	}
	c.record(ctx, st, ses, 0, "state_recovered", map[string]any{"previous": out.Previous != nil, "requests": len(out.Requests), "moved_steering": out.MovedSteering})
	return out, nil
}

// SetMode sets where the session's requests may be answered.
func (c *Client) SetMode(ctx context.Context, mode string) (store.Session, error) {
	if !slices.Contains(store.Modes, mode) {
		return store.Session{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "mode", Value: mode, Valid: store.Modes, Reason: "unknown mode"}
	}
	st, ses, err := c.Session(ctx)
	if err != nil {
		return store.Session{}, err
	}
	return st.SetSessionMode(ctx, ses.ID, mode, c.Actor(), store.SurfaceAgent)
}
