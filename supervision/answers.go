package supervision

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
)

// PromptAnswer is a person's answer to a continuation prompt.
type PromptAnswer struct {
	Prompt int64
	// Action is ActionContinue, ActionRefine or ActionStop.
	Action string
	// Instruction is refine's new instruction, sent as the agent's next
	// message (the other answers carry none).
	Instruction string
}

// AnswerPrompt takes a's answer to a prompt: authorise, the store's
// compare-and-set (a lost answer gets a *DecidedError; one after the
// timeout gets the timeout's outcome and an error that Is ErrExpired),
// PromptChanged.
func (s *Service) AnswerPrompt(ctx context.Context, a Actor, ans PromptAnswer) (Prompt, error) {
	switch ans.Action {
	case ActionContinue, ActionStop:
		ans.Instruction = ""
	case ActionRefine:
		if ans.Instruction = strings.TrimSpace(ans.Instruction); ans.Instruction == "" {
			return Prompt{}, agenterr.Invalidf("instruction", "refine needs the new instruction: it is sent to the agent as its next message")
		}
	default:
		return Prompt{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "action", Value: ans.Action, Valid: store.PromptActions, Reason: "a prompt is answered with continue, refine or stop"}
	}
	p, err := s.st.Prompt(ctx, ans.Prompt)
	if err != nil {
		return Prompt{}, err
	}
	if err := s.authoriseFor(ctx, a, p.SessionID, fmt.Sprintf("answer prompt p%d", p.ID)); err != nil {
		return Prompt{}, err
	}
	p, err = s.st.DecidePrompt(ctx, store.PromptDecision{ID: ans.Prompt, Action: ans.Action, Instruction: ans.Instruction, By: a.Name, Surface: a.Surface})
	if err != nil {
		return p, err
	}
	s.publish(events.Event{Kind: events.PromptChanged, SessionID: p.SessionID, ItemID: p.ID, Status: p.Status, Text: p.Instruction, Actor: a.Name})
	return p, nil
}

// AlertAnswer is a person's action on a stall alert.
type AlertAnswer struct {
	Alert int64
	// Action is AlertNudge, AlertDismiss or AlertStop.
	Action string
	// Text is a nudge's message ("": DefaultNudge).
	Text string
}

// AnswerAlert takes a's action on an alert: authorise, the store's
// compare-and-set (a lost action gets a *DecidedError), AlertChanged. A
// nudge queues its message for the session's supervisor; a stop ends the
// session's run.
func (s *Service) AnswerAlert(ctx context.Context, a Actor, ans AlertAnswer) (Alert, error) {
	switch ans.Action {
	case AlertNudge:
		if strings.TrimSpace(ans.Text) == "" {
			nudge, err := s.DefaultNudge()
			if err != nil {
				return Alert{}, err
			}
			ans.Text = nudge
		}
	case AlertDismiss, AlertStop:
		ans.Text = ""
	default:
		return Alert{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "action", Value: ans.Action, Valid: store.AlertActions, Reason: "a stall alert is answered with nudge, dismiss or stop"}
	}
	al, err := s.st.Alert(ctx, ans.Alert)
	if err != nil {
		return Alert{}, err
	}
	if err := s.authoriseFor(ctx, a, al.SessionID, fmt.Sprintf("answer stall alert s%d", al.ID)); err != nil {
		return Alert{}, err
	}
	al, err = s.st.DecideAlert(ctx, store.AlertDecision{ID: ans.Alert, Action: ans.Action, By: a.Name, Surface: a.Surface, Text: ans.Text})
	if err != nil {
		return al, err
	}
	s.publish(events.Event{Kind: events.AlertChanged, SessionID: al.SessionID, ItemID: al.ID, Status: al.Status, Text: ans.Text, Actor: a.Name})
	return al, nil
}

// fallbackNudge is the nudge when the config names none.
const fallbackNudge = "Are you still working? Say what you are doing or what blocks you."

// DefaultNudge is the message of a nudge given without one: the
// watchdog's (supervision.watchdog.nudge), else a plain question.
func (s *Service) DefaultNudge() (string, error) {
	cfg, err := keepmoving.LoadConfig(s.ws)
	if err != nil {
		return "", err
	}
	if n := cfg.Watchdog.Nudge; n != "" {
		return n, nil
	}
	return fallbackNudge, nil
}

// SetWatchdog pauses or resumes a session's stall watchdog (a long silence
// is expected: a build); pausing dismisses the active alert.
func (s *Service) SetWatchdog(ctx context.Context, a Actor, sessionID int64, paused bool) error {
	if err := s.authoriseFor(ctx, a, sessionID, fmt.Sprintf("change the watchdog of session %d", sessionID)); err != nil {
		return err
	}
	if err := s.st.SetWatchdogPaused(ctx, sessionID, paused, a.Name, a.Surface); err != nil {
		return err
	}
	state := map[bool]string{true: "paused", false: "watching"}[paused]
	s.publish(events.Event{Kind: events.AlertChanged, SessionID: sessionID, Status: "watchdog_" + state, Actor: a.Name})
	return nil
}

// authoriseFor is authorise for session id, read first.
func (s *Service) authoriseFor(ctx context.Context, a Actor, id int64, what string) error {
	ses, err := s.st.Session(ctx, id)
	if err != nil {
		return err
	}
	return s.authorise(ctx, a, ses, what)
}
