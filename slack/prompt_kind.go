package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// promptKind is a continuation prompt (a turn ended and the run is not
// finished): continue / refine (a new instruction, asked as a threaded
// reply) / stop.
type promptKind struct{}

const (
	actionPromptContinue = "prompt_continue"
	actionPromptRefine   = "prompt_refine"
	actionPromptStop     = "prompt_stop"
)

func (promptKind) item() string { return supervision.ItemPrompt }

func (promptKind) handles(action string) bool { return strings.HasPrefix(action, "prompt_") }

func (promptKind) buttons() []string {
	return []string{actionPromptContinue, actionPromptRefine, actionPromptStop}
}

func promptRender(conf Config, ses supervision.Session, p supervision.Prompt) func(string) (string, []slack.Block) {
	return func(status string) (string, []slack.Block) {
		kind := inert(strings.ReplaceAll(p.Kind, "_", " "), oneLine, 60)
		text := fmt.Sprintf("Prompt p%d (%s): the agent's turn ended", p.ID, inert(p.Kind, oneLine, 60))
		body := fmt.Sprintf(":speech_balloon: *Prompt p%d* — %s: the agent's turn ended and the run is not finished.", p.ID, kind)
		if p.Text != "" {
			body += "\n" + inert(p.Text, quoted, maxSectionText-width(body)-1)
		}
		blocks := []slack.Block{section(body), slack.NewContextBlock("", md(fmt.Sprintf("session %d · %s", ses.ID, sessionLine(conf, ses))))}
		if status == "" {
			blocks = append(blocks, buttons(fmt.Sprintf("prompt-%d", p.ID), p.ID,
				[3]string{actionPromptContinue, "Continue", "primary"}, [3]string{actionPromptRefine, "Refine…", ""}, [3]string{actionPromptStop, "Stop", "danger"}))
		} else {
			blocks = append(blocks, section(status))
			text += " — " + status
		}
		return text, blocks
	}
}

func promptLine(conf Config, p supervision.Prompt, lost bool) string {
	by := conf.mention(p.DecidedBy)
	if lost && p.Surface != supervision.SurfaceSlack && p.DecidedBy != "" {
		return fmt.Sprintf(":information_source: Already decided via %s by %s (%s)", inert(p.Surface, oneLine, 40), by, inert(p.Status, oneLine, 40))
	}
	via := ""
	if p.Surface != supervision.SurfaceSlack && p.Surface != "" {
		via = " via " + inert(p.Surface, oneLine, 40)
	}
	switch p.Status {
	case supervision.PromptContinued:
		if p.DecidedBy == "" || p.Surface == supervision.SurfaceTimeout {
			return ":arrow_forward: Continued (no answer before the timeout)"
		}
		return fmt.Sprintf(":arrow_forward: Continued by %s%s", by, via)
	case supervision.PromptRefined:
		return fmt.Sprintf(":pencil2: Refined by %s%s: %s", by, via, inert(p.Instruction, oneLine, 500))
	case supervision.PromptStopped:
		return fmt.Sprintf(":octagonal_sign: Stopped by %s%s", by, via)
	case supervision.PromptExpired:
		return ":hourglass: Expired without an answer (an error-recovery prompt never continues by itself)"
	case supervision.PromptWithdrawn:
		return ":leftwards_arrow_with_hook: Withdrawn"
	}
	return inert(p.Status, oneLine, 40)
}

func (promptKind) onAudit(ctx context.Context, s *Service, _ *delivery, ev supervision.AuditEvent, ses supervision.Session) error {
	id := itemOf(ev, "prompt")
	if id == 0 {
		return nil
	}
	p, err := s.sup.Prompt(ctx, id)
	if errors.Is(err, supervision.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	render := promptRender(s.conf, ses, p)
	if ev.Action == "prompt_raised" {
		text, blocks := render("")
		_, _, err := s.postItem(ctx, ses, supervision.ItemPrompt, p.ID, text, blocks)
		return err
	}
	if p.Status == supervision.PromptPending {
		return nil
	}
	return s.settle(ctx, supervision.ItemPrompt, p.ID, render, promptLine(s.conf, p, false))
}

func (k promptKind) onClick(ctx context.Context, s *Service, c click) error {
	p, err := s.sup.Prompt(ctx, c.ID)
	if errors.Is(err, supervision.ErrNotFound) {
		return s.decline(ctx, c, 0, 0, fmt.Sprintf(":no_entry: Not done: there is no prompt p%d (purged?).", c.ID))
	}
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("answer prompt p%d", p.ID)); !ok {
		return err
	}
	switch c.Action {
	case actionPromptRefine:
		return s.askText(ctx, c, supervision.ItemPrompt, "refine", p.ID, fmt.Sprintf("what should the agent do instead (prompt p%d)? It is sent as its next message.", p.ID))
	case actionPromptStop:
		return k.decide(ctx, s, c, ses, p, supervision.ActionStop, "")
	}
	return k.decide(ctx, s, c, ses, p, supervision.ActionContinue, "")
}

func (k promptKind) onText(ctx context.Context, s *Service, in input, text string) error {
	if strings.TrimSpace(text) == "" {
		s.inputs.put(in)
		_, err := s.post(ctx, in.Channel, in.ThreadTS, fmt.Sprintf("<@%s> the instruction is empty: reply again mentioning %s.", in.UserID, s.mentionApp()), nil)
		return err
	}
	p, err := s.sup.Prompt(ctx, in.ItemID)
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, p.SessionID)
	if err != nil {
		return err
	}
	c := click{Action: actionPromptRefine, ID: p.ID, UserID: in.UserID, Person: in.Person, Channel: in.Channel, TS: in.MessageTS, ThreadTS: in.ThreadTS}
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("answer prompt p%d", p.ID)); !ok {
		return err
	}
	return k.decide(ctx, s, c, ses, p, supervision.ActionRefine, text)
}

func (promptKind) decide(ctx context.Context, s *Service, c click, ses supervision.Session, p supervision.Prompt, action, instruction string) error {
	return s.decideFlow(ctx, c, supervision.ItemPrompt, p.ID, promptRender(s.conf, ses, p), func() (outcomeOf, error) {
		got, err := s.sup.AnswerPrompt(ctx, c.actor(), supervision.PromptAnswer{Prompt: p.ID, Action: action, Instruction: instruction})
		var lost *supervision.DecidedError
		if errors.As(err, &lost) {
			return outcomeOf{Line: promptLine(s.conf, lost.Prompt, true), Final: true, Lost: err}, nil
		}
		if err != nil {
			if cur, cerr := s.sup.Prompt(ctx, p.ID); cerr == nil && cur.Status != supervision.PromptPending {
				return outcomeOf{Line: promptLine(s.conf, cur, true), Final: true, Lost: err}, nil
			}
			return outcomeOf{}, err
		}
		return outcomeOf{Line: promptLine(s.conf, got, false), Final: true}, nil
	})
}
