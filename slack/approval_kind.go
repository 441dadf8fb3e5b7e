package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/store"
)

// approvalKind is an approval request: posted in the session's thread with
// approve / reject buttons, updated with the outcome however it is decided.
type approvalKind struct{}

// Buttons of a request.
const (
	actionApprove = "approve"
	actionReject  = "reject"
)

// Post states of a request's message.
const (
	stateOpen  = ""
	stateFinal = "final"
)

func (approvalKind) handles(action string) bool { return strings.HasPrefix(action, "request_") }

func (approvalKind) buttons() []string { return []string{actionApprove, actionReject} }

func (k approvalKind) onAudit(ctx context.Context, s *Service, ev store.Event, ses store.Session) error {
	r, err := s.st.Request(ctx, ev.RequestID)
	if err != nil {
		return err
	}
	if ev.Action == "request_raised" {
		if _, err := s.st.PostOf(ctx, store.SurfaceSlack, store.ItemRequest, r.ID); err == nil {
			return nil // posted already (caught up at start)
		}
		return k.post(ctx, s, ses, r)
	}
	// Decided somewhere (here, a terminal, the web page, the timeout): show
	// the outcome, unless a click here already did.
	defer s.locks.lock(fmt.Sprintf("request/%d", r.ID))()
	p, err := s.st.PostOf(ctx, store.SurfaceSlack, store.ItemRequest, r.ID)
	if err != nil {
		return nil // never posted (raised before a first start): nothing to update
	}
	if p.State == stateFinal {
		return nil
	}
	text, blocks := requestBlocks(s, ses, r, outcome(s.conf, r, false))
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	_, err = s.st.SetPostState(ctx, store.SurfaceSlack, store.ItemRequest, r.ID, stateOpen, stateFinal)
	return err
}

// post puts a pending request in the session's thread: the diff inline when
// short, else uploaded as a file in the thread.
func (approvalKind) post(ctx context.Context, s *Service, ses store.Session, r store.Request) error {
	threadTS, err := s.thread(ctx, ses)
	if err != nil {
		return err
	}
	tp, err := s.st.PostOf(ctx, store.SurfaceSlack, store.ItemSession, ses.ID)
	if err != nil {
		return err
	}
	defer s.locks.lock(fmt.Sprintf("request/%d", r.ID))()
	text, blocks := requestBlocks(s, ses, r, "")
	ts, err := s.post(ctx, tp.Channel, threadTS, text, blocks)
	if err != nil {
		return fmt.Errorf("post request %d: %w", r.ID, err)
	}
	if err := s.st.PutPost(ctx, store.Post{Surface: store.SurfaceSlack, ItemKind: store.ItemRequest, ItemID: r.ID, SessionID: ses.ID, Channel: tp.Channel, TS: ts}); err != nil {
		return err
	}
	if r.Diff != "" && !inlineDiff(s.conf, r.Diff) {
		name := fmt.Sprintf("request-%d.diff", r.ID)
		if err := s.upload(ctx, tp.Channel, threadTS, name, fmt.Sprintf("Request %d: %s", r.ID, r.File), fmt.Sprintf("The diff of request %d (%d lines).", r.ID, lines(r.Diff)), []byte(r.Diff)); err != nil {
			return fmt.Errorf("upload the diff of request %d: %w", r.ID, err)
		}
	}
	return nil
}

// inlineDiff says whether a diff is short enough to show in the message.
func inlineDiff(conf Config, diff string) bool {
	return lines(diff) <= conf.InlineDiffLines && len(diff) <= 2800
}

// outcome is the last line of a decided request's message. lostClick: a
// click here lost to a decision taken elsewhere.
func outcome(conf Config, r store.Request, lostClick bool) string {
	by := conf.mention(r.DecidedBy)
	reason := ""
	if r.Reason != "" {
		reason = ": " + escape(clip(r.Reason, 500))
	}
	if lostClick && (r.Status == store.StatusApproved || r.Status == store.StatusRejected) {
		return fmt.Sprintf(":information_source: Already decided via %s by %s (%s)%s", r.Surface, by, r.Status, reason)
	}
	switch r.Status {
	case store.StatusApproved:
		via := ""
		if r.Surface != store.SurfaceSlack {
			via = " via " + r.Surface
		}
		return fmt.Sprintf(":white_check_mark: Approved by %s%s%s", by, via, reason)
	case store.StatusRejected:
		via := ""
		if r.Surface != store.SurfaceSlack {
			via = " via " + r.Surface
		}
		return fmt.Sprintf(":x: Rejected by %s%s%s", by, via, reason)
	case store.StatusExpired:
		return ":hourglass: Expired" + reason + " (the agent was denied)"
	case store.StatusWithdrawn:
		return ":leftwards_arrow_with_hook: Withdrawn by the agent"
	case store.StatusInterrupted:
		return ":warning: Interrupted" + reason
	}
	return r.Status
}

// requestBlocks is a request's message: what the agent asks, then the
// buttons (status ""), "Processing…", or the outcome.
func requestBlocks(s *Service, ses store.Session, r store.Request, status string) (string, []slack.Block) {
	risk := map[string]string{store.RiskLow: ":large_green_circle: low", store.RiskHigh: ":large_orange_circle: high", store.RiskCritical: ":red_circle: *critical*"}[r.Risk]
	if risk == "" {
		risk = r.Risk
	}
	text := fmt.Sprintf("Request %d (risk %s): %s", r.ID, r.Risk, r.Title)
	blocks := []slack.Block{
		slack.NewSectionBlock(md(fmt.Sprintf(":raised_hand: *Request %d* — %s\nRisk: %s · tool `%s`", r.ID, escape(clip(r.Title, 300)), risk, escape(r.Tool))), nil, nil),
	}
	var fields []string
	if r.Command != "" {
		fields = append(fields, "*Command*\n```"+clip(r.Command, 1500)+"```")
	}
	if r.File != "" {
		fields = append(fields, "*File* `"+escape(r.File)+"`")
	}
	if r.URL != "" {
		fields = append(fields, "*URL* "+escape(r.URL))
	}
	if len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(md(strings.Join(fields, "\n")), nil, nil))
	}
	if r.Diff != "" {
		if inlineDiff(s.conf, r.Diff) {
			blocks = append(blocks, slack.NewSectionBlock(md("```"+strings.TrimRight(r.Diff, "\n")+"```"), nil, nil))
		} else {
			blocks = append(blocks, slack.NewContextBlock("", md(fmt.Sprintf(":page_facing_up: The diff has %d lines: it is attached below as request-%d.diff.", lines(r.Diff), r.ID))))
		}
	}
	ctxLine := fmt.Sprintf("session %d · %s", ses.ID, sessionLine(ses))
	if r.ExpiresAt != nil && status == "" {
		ctxLine += " · expires " + r.ExpiresAt.Local().Format("15:04 Jan 2")
	}
	blocks = append(blocks, slack.NewContextBlock("", md(escape(ctxLine))))
	switch status {
	case "":
		approve := slack.NewButtonBlockElement(actionApprove, fmt.Sprint(r.ID), plain("Approve"))
		approve.Style = slack.StylePrimary
		reject := slack.NewButtonBlockElement(actionReject, fmt.Sprint(r.ID), plain("Reject"))
		reject.Style = slack.StyleDanger
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("request-%d", r.ID), approve, reject))
	default:
		blocks = append(blocks, slack.NewSectionBlock(md(status), nil, nil))
		text += " — " + status
	}
	return text, blocks
}

const processing = ":hourglass_flowing_sand: Processing…"

// onClick: approve decides now; reject asks for the reason first.
func (k approvalKind) onClick(ctx context.Context, s *Service, c click) error {
	id, err := c.id()
	if err != nil {
		return fmt.Errorf("button value %q is not a request ID", c.Value)
	}
	r, err := s.st.Request(ctx, id)
	if err != nil {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Request %d: %v", id, err))
	}
	ses, err := s.st.Session(ctx, r.SessionID)
	if err != nil {
		return err
	}
	if c.Person == "" {
		return s.refuse(ctx, c, ses.ID, r.ID, s.notMapped(c))
	}
	if !s.st.MayDecide(c.Person, ses) {
		return s.refuse(ctx, c, ses.ID, r.ID, fmt.Sprintf("%s may not decide request %d: only the session's owner %s or an operator (supervision.operators) may",
			store.Handle(c.Person), r.ID, store.Handle(ses.Owner)))
	}
	if c.Action == actionReject {
		return k.askReason(ctx, s, c, r)
	}
	return k.decide(ctx, s, c, ses, r.ID, true, "")
}

// askReason asks the person for the reject reason as a threaded reply that
// mentions the app (a modal opened from a button in a thread does not
// render).
func (approvalKind) askReason(ctx context.Context, s *Service, c click, r store.Request) error {
	if r.Status != store.StatusPending {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, (&store.DecidedError{Request: r}).Error())
	}
	s.inputs.put(input{Kind: actionApprove, Verb: actionReject, ItemID: r.ID, Channel: c.Channel, ThreadTS: c.ThreadTS, UserID: c.UserID, Person: c.Person, MessageTS: c.TS})
	_, err := s.post(ctx, c.Channel, c.ThreadTS, fmt.Sprintf("<@%s> why reject request %d? Reply in this thread mentioning %s with the reason (it is sent to the agent), e.g. `%s use a temporary folder`.",
		c.UserID, r.ID, s.mentionApp(), s.mentionApp()), nil)
	return err
}

// onText is the reject reason.
func (k approvalKind) onText(ctx context.Context, s *Service, in input, text string) error {
	if strings.TrimSpace(text) == "" {
		s.inputs.put(in)
		_, err := s.post(ctx, in.Channel, in.ThreadTS, fmt.Sprintf("<@%s> the reason is empty: reply again mentioning %s with why request %d is rejected.", in.UserID, s.mentionApp(), in.ItemID), nil)
		return err
	}
	r, err := s.st.Request(ctx, in.ItemID)
	if err != nil {
		return err
	}
	ses, err := s.st.Session(ctx, r.SessionID)
	if err != nil {
		return err
	}
	c := click{Action: actionReject, Value: fmt.Sprint(in.ItemID), UserID: in.UserID, Person: in.Person, Channel: in.Channel, TS: in.MessageTS, ThreadTS: in.ThreadTS}
	return k.decide(ctx, s, c, ses, r.ID, false, text)
}

// decide is the click's decision: "Processing…" first, then the store's
// compare-and-set, then the outcome. Of two clicks (a double click, two
// people) the second waits for the first and is told it lost.
func (approvalKind) decide(ctx context.Context, s *Service, c click, ses store.Session, id int64, approve bool, reason string) error {
	defer s.locks.lock(fmt.Sprintf("request/%d", id))()
	p, err := s.st.PostOf(ctx, store.SurfaceSlack, store.ItemRequest, id)
	if err != nil {
		return err
	}
	cur, err := s.st.Request(ctx, id)
	if err != nil {
		return err
	}
	if cur.Status != store.StatusPending && p.State == stateFinal {
		// The message already shows the outcome: only the clicker is told.
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, (&store.DecidedError{Request: cur}).Error())
	}
	text, blocks := requestBlocks(s, ses, cur, processing)
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	r, derr := s.st.Decide(ctx, store.Decision{RequestID: id, Approve: approve, By: c.Person, Surface: store.SurfaceSlack, Reason: reason})
	var lost *store.DecidedError
	switch {
	case derr == nil:
	case errors.As(derr, &lost):
		r = lost.Request
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, derr.Error())
	default:
		// Not decided (not allowed after all, the database busy): the
		// buttons come back and the person is told why.
		text, blocks := requestBlocks(s, ses, cur, "")
		s.update(ctx, p.Channel, p.TS, text, blocks)
		return errors.Join(derr, s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Not decided: "+derr.Error()))
	}
	text, blocks = requestBlocks(s, ses, r, outcome(s.conf, r, lost != nil && r.Surface != store.SurfaceSlack))
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return err
	}
	_, err = s.st.SetPostState(ctx, store.SurfaceSlack, store.ItemRequest, id, stateOpen, stateFinal)
	return err
}
