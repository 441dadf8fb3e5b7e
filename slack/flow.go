package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// itemOf reads the ID of a prompt or alert from an audit event's detail
// ({"prompt": 12} / {"alert": 5}).
func itemOf(ev supervision.AuditEvent, key string) int64 {
	var d map[string]any
	json.Unmarshal(ev.Detail, &d)
	if v, ok := d[key].(float64); ok {
		return int64(v)
	}
	return 0
}

// outcomeOf is what a decision did: the message's last line, whether the
// item is settled (its buttons go), and the loser's error (told to the
// clicker only).
type outcomeOf struct {
	Line  string
	Final bool
	Lost  error
}

// decideFlow is a click's decision on a prompt or an alert, as for
// requests: "Processing…" first, then the store's compare-and-set, then
// the outcome; the second of two clicks waits and is told it lost.
func (s *Service) decideFlow(ctx context.Context, c click, item string, id int64, render func(status string) (string, []slack.Block), decide func() (outcomeOf, error)) error {
	defer s.locks.lock(fmt.Sprintf("%s/%d", item, id))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, item, id)
	if err != nil {
		return err
	}
	text, blocks := render(processing)
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	out, err := decide()
	if err != nil {
		text, blocks := render("")
		s.update(ctx, p.Channel, p.TS, text, blocks)
		return errors.Join(err, s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Not decided: "+inert(err.Error(), oneLine, 500)))
	}
	if out.Lost != nil {
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, inert(out.Lost.Error(), oneLine, 500))
	}
	status := out.Line
	if !out.Final {
		status = "" // still open: the buttons stay, the line goes under them
	}
	text, blocks = render(status)
	if !out.Final {
		blocks = append(blocks, slack.NewContextBlock("", md(out.Line)))
	}
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	if out.Final {
		_, err = s.sup.SetPostState(ctx, supervision.SurfaceSlack, item, id, stateOpen, stateFinal)
	}
	return err
}

// settle shows how an item ended when it was decided elsewhere (a
// terminal, the web page, a timeout, the watchdog), unless a click here
// already did.
func (s *Service) settle(ctx context.Context, item string, id int64, render func(status string) (string, []slack.Block), line string) error {
	defer s.locks.lock(fmt.Sprintf("%s/%d", item, id))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, item, id)
	if err != nil || p.State == stateFinal {
		return nil
	}
	text, blocks := render(line)
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	_, err = s.sup.SetPostState(ctx, supervision.SurfaceSlack, item, id, stateOpen, stateFinal)
	return err
}

// postItem posts an item's message with its buttons in the session's thread.
func (s *Service) postItem(ctx context.Context, ses supervision.Session, item string, id int64, text string, blocks []slack.Block) (channel, threadTS string, err error) {
	defer s.locks.lock(fmt.Sprintf("%s/%d", item, id))()
	if _, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, item, id); err == nil {
		return "", "", nil // posted already
	}
	threadTS, err = s.thread(ctx, ses)
	if err != nil {
		return "", "", err
	}
	tp, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
	if err != nil {
		return "", "", err
	}
	ts, err := s.post(ctx, tp.Channel, threadTS, text, blocks)
	if err != nil {
		return "", "", fmt.Errorf("post %s %d: %w", item, id, err)
	}
	// Recorded even when the service is stopping: a message on Slack that
	// no record names would be posted again.
	return tp.Channel, threadTS, s.sup.PutPost(context.WithoutCancel(ctx), supervision.Post{Surface: supervision.SurfaceSlack, ItemKind: item, ItemID: id, SessionID: ses.ID, Channel: tp.Channel, TS: ts})
}

// allowed checks that the clicker may do what (of a session's item, a
// request's requestID), refusing (ephemeral + audit) otherwise: a member
// linked to an agentinfra user whom the service allows, on a session that
// is on Slack (remote or hybrid: the buttons and the thread of a session
// switched to local do nothing, and say why).
func (s *Service) allowed(ctx context.Context, c click, ses supervision.Session, requestID int64, what string) (bool, error) {
	if c.Person == "" {
		return false, s.refuse(ctx, c, ses.ID, requestID, s.notMapped(c.UserID))
	}
	if err := s.sup.May(ctx, c.actor(), ses, what); err != nil {
		return false, s.refuse(ctx, c, ses.ID, requestID, inert(err.Error(), oneLine, 500))
	}
	if !posts(ses) {
		return false, s.decline(ctx, c, ses.ID, requestID, fmt.Sprintf(
			":house: Not done: session %d is in local mode now, so Slack can no longer %s: use the terminal (`agentinfra inbox`) or the web page (`agentinfra console`).", ses.ID, inert(what, oneLine, 200)))
	}
	return true, nil
}

// askText asks the clicker for text as a threaded reply mentioning the app.
func (s *Service) askText(ctx context.Context, c click, item, verb string, id int64, question string) error {
	s.inputs.put(input{Kind: item, Verb: verb, ItemID: id, Channel: c.Channel, ThreadTS: c.ThreadTS, UserID: c.UserID, Person: c.Person, MessageTS: c.TS})
	_, err := s.post(ctx, c.Channel, c.ThreadTS, fmt.Sprintf("<@%s> %s Reply in this thread mentioning %s.", c.UserID, question, s.mentionApp()), nil)
	return err
}

func buttons(blockID string, id int64, bs ...[3]string) slack.Block {
	var els []slack.BlockElement
	for _, b := range bs {
		e := slack.NewButtonBlockElement(b[0], fmt.Sprint(id), plain(b[1]))
		switch b[2] {
		case "primary":
			e.Style = slack.StylePrimary
		case "danger":
			e.Style = slack.StyleDanger
		}
		els = append(els, e)
	}
	return slack.NewActionBlock(blockID, els...)
}
