package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// alertKind is a stall alert (the agent was silent past the watchdog's
// threshold): nudge / nudge with a message (asked as a threaded reply) /
// dismiss / stop. An escalation (the nudges did not help) posts the configured
// channel mention in the thread.
type alertKind struct{}

const (
	actionAlertNudge    = "alert_nudge"
	actionAlertNudgeMsg = "alert_nudge_message"
	actionAlertStop     = "alert_stop"
	actionAlertDismiss  = "alert_dismiss"
)

func (alertKind) item() string { return supervision.ItemAlert }

func (alertKind) handles(action string) bool { return strings.HasPrefix(action, "alert_") }

func (alertKind) buttons() []string {
	return []string{actionAlertNudge, actionAlertNudgeMsg, actionAlertDismiss, actionAlertStop}
}

func alertRender(conf Config, ses supervision.Session, a supervision.Alert) func(string) (string, []slack.Block) {
	return func(status string) (string, []slack.Block) {
		text := fmt.Sprintf("Stall alert s%d: session %d is silent", a.ID, ses.ID)
		body := fmt.Sprintf(":zzz: *Stall alert s%d* — the agent of session %d has been silent", a.ID, ses.ID)
		if a.Reason != "" {
			body += ": " + inert(a.Reason, oneLine, 500)
		}
		if ses.LastTool != "" {
			body += "\nLast tool: " + inert(ses.LastTool, codeSpan, 200)
		}
		blocks := []slack.Block{section(body), slack.NewContextBlock("", md(fmt.Sprintf("session %d · %s", ses.ID, sessionLine(conf, ses))))}
		if status == "" {
			blocks = append(blocks, buttons(fmt.Sprintf("alert-%d", a.ID), a.ID,
				[3]string{actionAlertNudge, "Nudge", "primary"}, [3]string{actionAlertNudgeMsg, "Nudge with a message…", ""}, [3]string{actionAlertDismiss, "Dismiss", ""}, [3]string{actionAlertStop, "Stop", "danger"}))
		} else {
			blocks = append(blocks, section(status))
			text += " — " + status
		}
		return text, blocks
	}
}

func alertLine(conf Config, a supervision.Alert) string {
	by := conf.mention(a.DecidedBy)
	via := ""
	if a.Surface != supervision.SurfaceSlack && a.Surface != "" && a.Surface != supervision.SurfaceSupervisor {
		via = " via " + inert(a.Surface, oneLine, 40)
	}
	switch a.Status {
	case supervision.AlertNudged:
		if a.DecidedBy == supervision.ActorWatchdog {
			return fmt.Sprintf(":wave: Nudged by the watchdog (%d so far)", a.Nudges)
		}
		return fmt.Sprintf(":wave: Nudged by %s%s (%d so far)", by, via, a.Nudges)
	case supervision.AlertSelfRecovered:
		return ":white_check_mark: The agent spoke again (self-recovered)"
	case supervision.AlertEscalated:
		return fmt.Sprintf(":rotating_light: Escalated after %d nudges", a.Nudges)
	case supervision.AlertDismissed:
		if a.DecidedBy != "" && a.DecidedBy != supervision.ActorWatchdog {
			return fmt.Sprintf(":heavy_minus_sign: Dismissed by %s%s", by, via)
		}
		return ":heavy_minus_sign: Dismissed" + reasonSuffix(a.Reason)
	}
	return inert(a.Status, oneLine, 40)
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + inert(r, oneLine, 300)
}

func (alertKind) onAudit(ctx context.Context, s *Service, d *delivery, ev supervision.AuditEvent, ses supervision.Session) error {
	id := itemOf(ev, "alert")
	if id == 0 {
		return nil
	}
	a, err := s.sup.Alert(ctx, id)
	if errors.Is(err, supervision.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	render := alertRender(s.conf, ses, a)
	switch ev.Action {
	case "alert_raised":
		text, blocks := render("")
		_, _, err := s.postItem(ctx, ses, supervision.ItemAlert, a.ID, text, blocks)
		return err
	case "alert_escalated":
		// The escalation goes to the channel, not only to the thread's
		// followers: the mention is what people get notified by.
		if err := s.settle(ctx, supervision.ItemAlert, a.ID, render, alertLine(s.conf, a)); err != nil {
			return err
		}
		threadTS, err := s.thread(ctx, ses)
		if err != nil {
			return err
		}
		p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
		if err != nil {
			return err
		}
		return d.once(ctx, "escalation", func() error {
			text := fmt.Sprintf("%s :rotating_light: Session %d's agent is still silent after %d nudges (stall alert s%d)%s. Owner: %s.",
				s.conf.EscalationMention, ses.ID, a.Nudges, a.ID, reasonSuffix(a.Reason), s.conf.mention(ses.Owner))
			_, err := s.post(ctx, p.Channel, threadTS, text, nil)
			return err
		})
	case "alert_nudge":
		if a.Active() {
			// A nudge (the watchdog's or a person's) leaves the alert open.
			return s.noteOpen(ctx, supervision.ItemAlert, a.ID, render, alertLine(s.conf, a))
		}
	}
	if a.Active() {
		return nil
	}
	return s.settle(ctx, supervision.ItemAlert, a.ID, render, alertLine(s.conf, a))
}

// noteOpen rewrites an open item's message with a line under its buttons.
func (s *Service) noteOpen(ctx context.Context, item string, id int64, render func(string) (string, []slack.Block), line string) error {
	defer s.locks.lock(fmt.Sprintf("%s/%d", item, id))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, item, id)
	if err != nil || p.State == stateFinal {
		return nil
	}
	text, blocks := render("")
	return s.update(ctx, p.Channel, p.TS, text, append(blocks, slack.NewContextBlock("", md(line))))
}

func (k alertKind) onClick(ctx context.Context, s *Service, c click) error {
	a, err := s.sup.Alert(ctx, c.ID)
	if errors.Is(err, supervision.ErrNotFound) {
		return s.decline(ctx, c, 0, 0, fmt.Sprintf(":no_entry: Not done: there is no stall alert s%d (purged?).", c.ID))
	}
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, a.SessionID)
	if err != nil {
		return err
	}
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("answer stall alert s%d", a.ID)); !ok {
		return err
	}
	switch c.Action {
	case actionAlertNudgeMsg:
		return s.askText(ctx, c, supervision.ItemAlert, "nudge", a.ID, fmt.Sprintf("what should the nudge say to the agent (stall alert s%d)?", a.ID))
	case actionAlertStop:
		return k.decide(ctx, s, c, ses, a, supervision.AlertStop, "")
	case actionAlertDismiss:
		return k.decide(ctx, s, c, ses, a, supervision.AlertDismiss, "")
	}
	// A plain nudge says the watchdog's configured nudge.
	return k.decide(ctx, s, c, ses, a, supervision.AlertNudge, "")
}

func (k alertKind) onText(ctx context.Context, s *Service, in input, text string) error {
	if strings.TrimSpace(text) == "" {
		s.inputs.put(in)
		_, err := s.post(ctx, in.Channel, in.ThreadTS, fmt.Sprintf("<@%s> the nudge's message is empty: reply again mentioning %s.", in.UserID, s.mentionApp()), nil)
		return err
	}
	a, err := s.sup.Alert(ctx, in.ItemID)
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, a.SessionID)
	if err != nil {
		return err
	}
	c := click{Action: actionAlertNudgeMsg, ID: a.ID, UserID: in.UserID, Person: in.Person, Channel: in.Channel, TS: in.MessageTS, ThreadTS: in.ThreadTS}
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("answer stall alert s%d", a.ID)); !ok {
		return err
	}
	return k.decide(ctx, s, c, ses, a, supervision.AlertNudge, text)
}

func (alertKind) decide(ctx context.Context, s *Service, c click, ses supervision.Session, a supervision.Alert, action, text string) error {
	return s.decideFlow(ctx, c, supervision.ItemAlert, a.ID, alertRender(s.conf, ses, a), func() (outcomeOf, error) {
		got, err := s.sup.AnswerAlert(ctx, c.actor(), supervision.AlertAnswer{Alert: a.ID, Action: action, Text: text})
		var lost *supervision.DecidedError
		if errors.As(err, &lost) {
			return outcomeOf{Line: alertLine(s.conf, lost.Alert), Final: !lost.Alert.Active(), Lost: err}, nil
		}
		if err != nil {
			return outcomeOf{}, err
		}
		line := alertLine(s.conf, got)
		if action == supervision.AlertStop {
			line = fmt.Sprintf(":octagonal_sign: Stopped by %s: the session's run ends", s.conf.mention(c.Person))
		}
		return outcomeOf{Line: line, Final: !got.Active()}, nil
	})
}
