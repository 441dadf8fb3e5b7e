package slack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/slack-go/slack"

	"github.com/agentinfra/agentinfra/supervision"
)

// approvalKind is an approval request: posted in the session's thread with
// approve / reject buttons, updated with the outcome however it is decided.
type approvalKind struct{}

// Buttons of a request, and of the confirmation "approve always" asks.
const (
	actionApprove       = "approve"
	actionReject        = "reject"
	actionApproveAlways = "approve_always"
	actionConfirmAlways = "approve_always_confirm"
	// actionApproveSession approves the request and its like for the
	// rest of its session (no policy rule, so nothing to confirm).
	actionApproveSession = "approve_session"
)

// Post states of a request's message.
const (
	stateOpen  = ""
	stateFinal = "final"
)

func (approvalKind) item() string { return supervision.ItemRequest }

func (approvalKind) handles(action string) bool { return strings.HasPrefix(action, "request_") }

func (approvalKind) buttons() []string {
	return []string{actionApprove, actionReject, actionApproveAlways, actionConfirmAlways, actionApproveSession}
}

func (k approvalKind) onAudit(ctx context.Context, s *Service, d *delivery, ev supervision.AuditEvent, ses supervision.Session) error {
	r, err := s.sup.Request(ctx, ev.RequestID)
	if errors.Is(err, supervision.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ev.Action == "request_raised" {
		return k.post(ctx, s, d, ses, r)
	}
	return k.settle(ctx, s, ses, r)
}

// settle shows a request's outcome, decided somewhere (here, a terminal,
// the web page, the timeout), unless a click here already did.
func (approvalKind) settle(ctx context.Context, s *Service, ses supervision.Session, r supervision.Request) error {
	render := func(status string) (string, []slack.Block) { return requestBlocks(s, ses, r, status) }
	return s.settle(ctx, supervision.ItemRequest, r.ID, render, outcome(s.conf, r, false))
}

// post puts a request in the session's thread, once: the diff inline when
// short, else uploaded as a file in the thread (once too).
func (approvalKind) post(ctx context.Context, s *Service, d *delivery, ses supervision.Session, r supervision.Request) error {
	text, blocks := requestBlocks(s, ses, r, "")
	channel, threadTS, err := s.postItem(ctx, ses, supervision.ItemRequest, r.ID, text, blocks)
	if err != nil {
		return err
	}
	if r.Diff == "" || inlineDiff(s.conf, r.Diff) {
		return nil
	}
	if channel == "" { // posted before: the diff too, unless the outbox says otherwise
		if d == nil {
			return nil
		}
		tp, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemSession, ses.ID)
		if err != nil {
			return err
		}
		channel, threadTS = tp.Channel, tp.TS
	}
	return d.once(ctx, "diff", func() error {
		name := fmt.Sprintf("request-%d.diff", r.ID)
		if err := s.upload(ctx, channel, threadTS, name, fmt.Sprintf("Request %d: %s", r.ID, r.File), fmt.Sprintf("The diff of request %d (%d lines).", r.ID, lines(r.Diff)), []byte(r.Diff)); err != nil {
			return fmt.Errorf("upload the diff of request %d: %w", r.ID, err)
		}
		return nil
	})
}

// inlineDiff says whether a diff is short enough to show in the message:
// up to Config.InlineDiffLines lines, and whole within a section.
func inlineDiff(conf Config, diff string) bool {
	return lines(diff) <= conf.InlineDiffLines && width(inert(strings.TrimRight(diff, "\n"), codeBlock, math.MaxInt)) <= maxSectionText
}

// outcome is the last line of a decided request's message. lostClick: a
// click here lost to a decision taken elsewhere.
func outcome(conf Config, r supervision.Request, lostClick bool) string {
	by := conf.mention(r.DecidedBy)
	reason := ""
	if r.Reason != "" {
		reason = ": " + inert(r.Reason, oneLine, 500)
	}
	via := ""
	if r.Surface != supervision.SurfaceSlack {
		via = " via " + inert(r.Surface, oneLine, 40)
	}
	if lostClick && (r.Status == supervision.StatusApproved || r.Status == supervision.StatusRejected) {
		return fmt.Sprintf(":information_source: Already decided%s by %s (%s)%s", via, by, r.Status, reason)
	}
	switch r.Status {
	case supervision.StatusApproved:
		approved := "Approved"
		switch r.Scope {
		case supervision.ScopeAlways:
			approved = "Approved always" // and such requests from now on: a policy rule
		case supervision.ScopeSession:
			approved = "Approved for this session" // and such requests of the session
		}
		return fmt.Sprintf(":white_check_mark: %s by %s%s%s", approved, by, via, reason)
	case supervision.StatusRejected:
		return fmt.Sprintf(":x: Rejected by %s%s%s", by, via, reason)
	case supervision.StatusExpired:
		return ":hourglass: Expired" + reason + " (the agent was denied)"
	case supervision.StatusWithdrawn:
		return ":leftwards_arrow_with_hook: Withdrawn by the agent"
	case supervision.StatusInterrupted:
		return ":warning: Interrupted" + reason
	}
	return inert(r.Status, oneLine, 40)
}

// requestBlocks is a request's message: what the agent asks, then the
// buttons (status ""), "Processing…", or the outcome. Each field the agent
// wrote is in a section of its own, within Slack's limit.
func requestBlocks(s *Service, ses supervision.Session, r supervision.Request, status string) (string, []slack.Block) {
	risk := map[string]string{supervision.RiskLow: ":large_green_circle: low", supervision.RiskHigh: ":large_orange_circle: high", supervision.RiskCritical: ":red_circle: *critical*"}[r.Risk]
	if risk == "" {
		risk = inert(r.Risk, oneLine, 40)
	}
	text := fmt.Sprintf("Request %d (risk %s): %s", r.ID, inert(r.Risk, oneLine, 40), inert(r.Title, oneLine, 1000))
	blocks := []slack.Block{
		section(fmt.Sprintf(":raised_hand: *Request %d* — %s\nRisk: %s · tool %s", r.ID, inert(r.Title, oneLine, 1000), risk, inert(r.Tool, codeSpan, 200))),
	}
	if r.Command != "" {
		const label = "*Command*\n"
		blocks = append(blocks, section(label+inert(r.Command, codeBlock, maxSectionText-width(label))))
	}
	var fields []string
	if r.File != "" {
		fields = append(fields, "*File* "+inert(r.File, codeSpan, 1000))
	}
	if r.URL != "" {
		fields = append(fields, "*URL* "+inert(r.URL, codeSpan, 1500))
	}
	if len(fields) > 0 {
		blocks = append(blocks, section(strings.Join(fields, "\n")))
	}
	if r.Diff != "" {
		if inlineDiff(s.conf, r.Diff) {
			blocks = append(blocks, section(inert(strings.TrimRight(r.Diff, "\n"), codeBlock, maxSectionText)))
		} else {
			blocks = append(blocks, slack.NewContextBlock("", md(fmt.Sprintf(":page_facing_up: The diff has %d lines: it is attached below as request-%d.diff.", lines(r.Diff), r.ID))))
		}
	}
	ctxLine := fmt.Sprintf("session %d · %s", ses.ID, sessionLine(s.conf, ses))
	if r.ExpiresAt != nil && status == "" {
		ctxLine += " · expires " + r.ExpiresAt.Local().Format("15:04 Jan 2")
	}
	blocks = append(blocks, slack.NewContextBlock("", md(ctxLine)))
	switch status {
	case "":
		approve := slack.NewButtonBlockElement(actionApprove, fmt.Sprint(r.ID), plain("Approve"))
		approve.Style = slack.StylePrimary
		buttons := []slack.BlockElement{approve}
		if r.Risk != supervision.RiskCritical { // never approved for a session
			buttons = append(buttons, slack.NewButtonBlockElement(actionApproveSession, fmt.Sprint(r.ID), plain("Approve for this session")))
		}
		reject := slack.NewButtonBlockElement(actionReject, fmt.Sprint(r.ID), plain("Reject"))
		reject.Style = slack.StyleDanger
		buttons = append(buttons, slack.NewButtonBlockElement(actionApproveAlways, fmt.Sprint(r.ID), plain("Approve always…")), reject)
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("request-%d", r.ID), buttons...))
	default:
		blocks = append(blocks, section(status))
		text += " — " + status
	}
	return text, blocks
}

const processing = ":hourglass_flowing_sand: Processing…"

// onClick: approve (and approve for this session) decides now; reject
// asks for the reason first;
// approve always shows the policy rule it adds, and its confirmation
// (value "ID:fingerprint" of the rule shown) decides. The button was
// checked to be on the request's message (on the confirmation's, for
// the confirmation).
func (k approvalKind) onClick(ctx context.Context, s *Service, c click) error {
	r, err := s.sup.Request(ctx, c.ID)
	if errors.Is(err, supervision.ErrNotFound) {
		return s.decline(ctx, c, 0, 0, fmt.Sprintf(":no_entry: Not done: there is no request %d (purged?).", c.ID))
	}
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, r.SessionID)
	if err != nil {
		return err
	}
	if ok, err := s.allowed(ctx, c, ses, r.ID, fmt.Sprintf("decide request %d", r.ID)); !ok {
		return err
	}
	switch c.Action {
	case actionReject:
		return k.askReason(ctx, s, c, r)
	case actionApproveAlways:
		return k.askAlways(ctx, s, c, r)
	case actionConfirmAlways:
		return k.confirmAlways(ctx, s, c, ses, r, c.Shown)
	}
	_, err = k.decide(ctx, s, c, ses, supervision.Decision{Request: r.ID, Approve: true, Session: c.Action == actionApproveSession})
	return err
}

// askReason asks the person for the reject reason as a threaded reply that
// mentions the app (a modal opened from a button in a thread does not
// render).
func (approvalKind) askReason(ctx context.Context, s *Service, c click, r supervision.Request) error {
	if r.Status != supervision.StatusPending {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, inert((&supervision.DecidedError{Request: r}).Error(), oneLine, 500))
	}
	s.inputs.put(input{Kind: supervision.ItemRequest, Verb: actionReject, ItemID: r.ID, Channel: c.Channel, ThreadTS: c.ThreadTS, UserID: c.UserID, Person: c.Person, MessageTS: c.TS})
	_, err := s.post(ctx, c.Channel, c.ThreadTS, fmt.Sprintf("<@%s> why reject request %d? Reply in this thread mentioning %s with the reason (it is sent to the agent), e.g. `%s use a temporary folder`.",
		c.UserID, r.ID, s.mentionApp(), s.mentionApp()), nil)
	return err
}

// askAlways shows, in the thread, the rule "approve always" would add to
// the workspace policy (and the policy file's diff), with the button that
// adds it and approves: nothing is written before that click.
func (approvalKind) askAlways(ctx context.Context, s *Service, c click, r supervision.Request) error {
	plan, err := s.sup.PlanAlways(ctx, r.ID)
	if err != nil {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Approve always, request %d: %s", r.ID, inert(err.Error(), oneLine, 500)))
	}
	body := fmt.Sprintf("<@%s> approving request %d always adds %s to .agent/policy.yaml", c.UserID, r.ID, inert(plan.RuleText(), codeSpan, 1000))
	if plan.Diff == "" {
		body += " (it is there already)"
	} else {
		body += ":\n" + inert(strings.TrimRight(plan.Diff, "\n"), codeBlock, 1500)
	}
	if plan.Note != "" {
		body += "\n:warning: " + inert(plan.Note, oneLine, 300)
	}
	confirm := slack.NewButtonBlockElement(actionConfirmAlways, fmt.Sprintf("%d:%s", r.ID, plan.Fingerprint()), plain("Add the rule and approve"))
	confirm.Style = slack.StylePrimary
	text := fmt.Sprintf("Approve always, request %d: adds %s", r.ID, inert(plan.RuleText(), oneLine, 1000))
	_, err = s.post(ctx, c.Channel, c.ThreadTS, text, []slack.Block{section(body),
		slack.NewActionBlock(fmt.Sprintf("always-%d", r.ID), confirm)})
	return err
}

// confirmAlways is the click on askAlways' button: the rule planned now
// must be the rule shown (else nothing is written and the person looks
// again), then the approval with the rule, as a click on Approve.
func (k approvalKind) confirmAlways(ctx context.Context, s *Service, c click, ses supervision.Session, r supervision.Request, shown string) error {
	plan, err := s.sup.PlanAlways(ctx, r.ID)
	if err != nil {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Not decided: "+inert(err.Error(), oneLine, 500))
	}
	if plan.Fingerprint() != shown {
		return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Not decided: the rule changed since it was shown (now %s): click Approve always again", inert(plan.RuleText(), codeSpan, 1000)))
	}
	won, err := k.decide(ctx, s, c, ses, supervision.Decision{Request: r.ID, Approve: true, Always: plan})
	if !won {
		return err
	}
	// The confirmation's message says what it did; its button goes.
	done := fmt.Sprintf(":white_check_mark: %s added %s to .agent/policy.yaml and approved request %d.", s.conf.mention(c.Person), inert(plan.RuleText(), codeSpan, 1000), r.ID)
	return errors.Join(err, s.update(ctx, c.Channel, c.TS, done, []slack.Block{section(done)}))
}

// onText is the reject reason, from a person who may still decide.
func (k approvalKind) onText(ctx context.Context, s *Service, in input, text string) error {
	if strings.TrimSpace(text) == "" {
		s.inputs.put(in)
		_, err := s.post(ctx, in.Channel, in.ThreadTS, fmt.Sprintf("<@%s> the reason is empty: reply again mentioning %s with why request %d is rejected.", in.UserID, s.mentionApp(), in.ItemID), nil)
		return err
	}
	r, err := s.sup.Request(ctx, in.ItemID)
	if err != nil {
		return err
	}
	ses, err := s.sup.Session(ctx, r.SessionID)
	if err != nil {
		return err
	}
	c := click{Action: actionReject, Value: fmt.Sprint(in.ItemID), ID: in.ItemID, UserID: in.UserID, Person: in.Person, Channel: in.Channel, TS: in.MessageTS, ThreadTS: in.ThreadTS}
	if ok, err := s.allowed(ctx, c, ses, r.ID, fmt.Sprintf("decide request %d", r.ID)); !ok {
		return err
	}
	_, err = k.decide(ctx, s, c, ses, supervision.Decision{Request: r.ID, Reason: text})
	return err
}

// decide is the click's decision: "Processing…" first, then the store's
// compare-and-set, then the outcome. Of two clicks (a double click, two
// people) the second waits for the first and is told it lost.
func (approvalKind) decide(ctx context.Context, s *Service, c click, ses supervision.Session, d supervision.Decision) (won bool, err error) {
	id := d.Request
	defer s.locks.lock(fmt.Sprintf("request/%d", id))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, supervision.ItemRequest, id)
	if err != nil {
		return false, err
	}
	cur, err := s.sup.Request(ctx, id)
	if err != nil {
		return false, err
	}
	if cur.Status != supervision.StatusPending && p.State == stateFinal {
		// The message already shows the outcome: only the clicker is told.
		return false, s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, inert((&supervision.DecidedError{Request: cur}).Error(), oneLine, 500))
	}
	text, blocks := requestBlocks(s, ses, cur, processing)
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return false, err
	}
	r, derr := s.sup.Decide(ctx, c.actor(), d)
	var lost *supervision.DecidedError
	switch {
	case errors.As(derr, &lost):
		r = lost.Request
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, inert(derr.Error(), oneLine, 500))
	case derr != nil && r.Status != supervision.StatusApproved:
		// Not decided (not allowed after all, the database busy): the
		// buttons come back and the person is told why.
		text, blocks := requestBlocks(s, ses, cur, "")
		s.update(ctx, p.Channel, p.TS, text, blocks)
		return false, errors.Join(derr, s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Not decided: "+inert(derr.Error(), oneLine, 500)))
	case derr != nil: // approved, but its policy rule could not be written
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, inert(derr.Error(), oneLine, 500))
	}
	text, blocks = requestBlocks(s, ses, r, outcome(s.conf, r, lost != nil && r.Surface != supervision.SurfaceSlack))
	if err := s.update(ctx, p.Channel, p.TS, text, blocks); err != nil {
		return lost == nil, err
	}
	_, err = s.sup.SetPostState(ctx, supervision.SurfaceSlack, supervision.ItemRequest, id, stateOpen, stateFinal)
	return lost == nil, err
}
