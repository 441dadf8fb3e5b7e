package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/agentinfra/agentinfra/supervision"
)

// kind is one kind of message in a session's thread: the audit actions it
// posts or updates on, the buttons it answers, and the text it asked for.
// Sessions, approval requests, continuation prompts and stall alerts are
// kinds, over the same feed (their audit actions) and the same click and
// text plumbing.
type kind interface {
	// item is what its messages are about (supervision.ItemRequest…).
	item() string
	// handles says whether an audit action is this kind's.
	handles(action string) bool
	// onAudit posts or updates the message of the event's item; d records
	// the parts posted (nil outside the outbox).
	onAudit(ctx context.Context, s *Service, d *delivery, ev supervision.AuditEvent, ses supervision.Session) error
	// buttons lists the action_ids of its buttons.
	buttons() []string
	// onClick answers a click on a button of the item's own message (the
	// kind checks who may act: that depends on the item).
	onClick(ctx context.Context, s *Service, c click) error
	// onText answers the text a person gave to a question it asked.
	onText(ctx context.Context, s *Service, in input, text string) error
}

// click is one button press.
type click struct {
	Action   string // the button's action_id
	Value    string // its value: the item's ID (approve always: "ID:fingerprint")
	BlockID  string // the block it sits in
	ID       int64  // the item the value names
	Shown    string // approve always: the fingerprint of the rule shown
	UserID   string // Slack member
	UserName string
	Person   string // the agentinfra user (config's slack.users); "" when unknown
	Channel  string
	TS       string // the clicked message
	ThreadTS string
}

// actor is the clicker as the supervision service knows them.
func (c click) actor() supervision.Actor {
	return supervision.Person(c.Person, supervision.SurfaceSlack)
}

// kindOfButton is the kind whose button action is (nil: none of ours).
func (s *Service) kindOfButton(action string) kind {
	for _, k := range s.kinds {
		if slices.Contains(k.buttons(), action) {
			return k
		}
	}
	return nil
}

func (s *Service) onInteractive(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	for _, a := range cb.ActionCallback.BlockActions {
		c := click{Action: a.ActionID, Value: a.Value, BlockID: a.BlockID, UserID: cb.User.ID, UserName: cb.User.Name, Channel: cb.Channel.ID,
			TS: cb.Container.MessageTs, ThreadTS: cb.Container.ThreadTs}
		if c.Channel == "" {
			c.Channel = cb.Container.ChannelID
		}
		if c.ThreadTS == "" {
			c.ThreadTS = cb.Message.ThreadTimestamp
		}
		if c.Action == actionOpenReview {
			continue // a link: Slack opened the console's page
		}
		c.Person, _ = s.conf.person(c.UserID)
		k := s.kindOfButton(c.Action)
		if k == nil {
			s.decline(ctx, c, 0, 0, fmt.Sprintf(":no_entry: Not done: this button (%s) is not one agentinfra knows.", inert(c.Action, codeSpan, 100)))
			continue
		}
		sessionID, why, err := s.checkButton(ctx, k, &c)
		if err != nil {
			s.log.Warn("slack: click", "action", c.Action, "err", err)
			s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Not done: "+inert(err.Error(), oneLine, 500)+". Try again.")
			continue
		}
		if why != "" {
			s.decline(ctx, c, sessionID, 0, ":no_entry: Not done: "+why+".")
			continue
		}
		if err := k.onClick(ctx, s, c); err != nil {
			s.log.Warn("slack: click", "action", c.Action, "value", clip(c.Value, maxRefusalValue), "user", c.UserID, "err", err)
		}
	}
}

// checkButton reads the item a button's value names into c.ID, and checks
// that the button sits on that item's message: a value that is malformed,
// names no item, or another item than the message's is refused (why).
func (s *Service) checkButton(ctx context.Context, k kind, c *click) (sessionID int64, why string, err error) {
	value := c.Value
	if c.Action == actionConfirmAlways {
		value, c.Shown, _ = strings.Cut(c.Value, ":")
	}
	id, perr := strconv.ParseInt(value, 10, 64)
	if perr != nil || id <= 0 {
		return 0, fmt.Sprintf("this button's value %s is not an item of agentinfra's", inert(c.Value, codeSpan, 100)), nil
	}
	c.ID = id
	if c.Action == actionConfirmAlways {
		// The confirmation is a message of its own, posted for one request.
		if c.BlockID != fmt.Sprintf("always-%d", id) {
			return 0, fmt.Sprintf("this button is not the confirmation of request %d", id), nil
		}
		return 0, "", nil
	}
	// A message being posted is recorded under the item's lock: a click
	// that comes between the two waits for it.
	s.locks.lock(fmt.Sprintf("%s/%d", k.item(), id))()
	p, err := s.sup.PostOf(ctx, supervision.SurfaceSlack, k.item(), id)
	if errors.Is(err, supervision.ErrNotFound) {
		return 0, fmt.Sprintf("%s has no message on Slack", itemName(k.item(), id)), nil
	}
	if err != nil {
		return 0, "", err
	}
	if p.Channel != c.Channel || p.TS != c.TS {
		return p.SessionID, fmt.Sprintf("this button is not on the message of %s", itemName(k.item(), id)), nil
	}
	return p.SessionID, "", nil
}

// itemName is how messages name an item: request 12, prompt p3, stall
// alert s2.
func itemName(item string, id int64) string {
	switch item {
	case supervision.ItemPrompt:
		return fmt.Sprintf("prompt p%d", id)
	case supervision.ItemAlert:
		return fmt.Sprintf("stall alert s%d", id)
	}
	return fmt.Sprintf("%s %d", item, id)
}

// input is a question asked in a thread, waiting for one person's
// threaded reply that mentions the app.
type input struct {
	Kind     string // the kind's item (supervision.ItemRequest…)
	Verb     string // what the text is for ("reject")
	ItemID   int64
	Channel  string
	ThreadTS string
	UserID   string
	Person   string
	// MessageTS is the item's message (updated with the outcome).
	MessageTS string
}

func (in input) key() string { return in.Channel + "/" + in.ThreadTS + "/" + in.UserID }

// inputs are the questions waiting for an answer (in memory: after a
// restart, the person clicks again).
type inputs struct {
	mu    sync.Mutex
	byKey map[string]input
}

func newInputs() *inputs { return &inputs{byKey: map[string]input{}} }

func (i *inputs) put(in input) {
	i.mu.Lock()
	i.byKey[in.key()] = in
	i.mu.Unlock()
}

// take removes and returns the question channel/thread asked user.
func (i *inputs) take(channel, threadTS, userID string) (input, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	k := channel + "/" + threadTS + "/" + userID
	in, ok := i.byKey[k]
	delete(i.byKey, k)
	return in, ok
}

// onEventsAPI handles app mentions: the answer to a question asked in the
// thread, else (in a session's thread) a steering message. The text is
// decoded from Slack's encoding first: the agent gets what was typed.
func (s *Service) onEventsAPI(ctx context.Context, evt socketmode.Event) {
	ev, ok := appMention(evt)
	if !ok {
		return
	}
	text := s.conf.plainText(s.stripMention(ev.Text))
	c := click{Action: "mention", Value: text, UserID: ev.User, Channel: ev.Channel, ThreadTS: ev.ThreadTimeStamp}
	c.Person, _ = s.conf.person(ev.User)
	if ev.ThreadTimeStamp == "" {
		s.decline(ctx, c, 0, 0, "A mention of the app outside a session's thread does nothing: reply in a session's thread, or see `/agentinfra help`.")
		return
	}
	if in, ok := s.inputs.take(ev.Channel, ev.ThreadTimeStamp, ev.User); ok {
		for _, k := range s.kinds {
			if k.item() == in.Kind {
				if err := k.onText(ctx, s, in, text); err != nil {
					s.log.Warn("slack: answer", "kind", in.Kind, "item", in.ItemID, "err", err)
				}
				return
			}
		}
		return
	}
	s.onThreadMention(ctx, c)
}

// onThreadMention is an @app reply in a session's thread that answers no
// question: a steering message, delivered to the agent as its next user
// message by the session's supervisor (queued until the CLI can take it).
func (s *Service) onThreadMention(ctx context.Context, c click) {
	id, err := s.sup.SessionOfThread(ctx, supervision.SurfaceSlack, c.Channel, c.ThreadTS)
	if err != nil {
		s.decline(ctx, c, 0, 0, "This thread is not a supervised session's: mention the app in a session's thread to send its agent a message, or see `/agentinfra help`.")
		return
	}
	ses, err := s.sup.Session(ctx, id)
	if err != nil {
		return
	}
	c.Action = "steer"
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("steer session %d", id)); !ok {
		if err != nil {
			s.log.Warn("slack: refuse steering", "err", err)
		}
		return
	}
	if strings.TrimSpace(c.Value) == "" {
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, "Nothing to send: write the message after the mention.")
		return
	}
	m, err := s.sup.Steer(ctx, c.actor(), id, c.Value)
	if err != nil {
		s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Not sent to session %d: %s", id, inert(err.Error(), oneLine, 500)))
		return
	}
	s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, fmt.Sprintf("Queued for the agent of session %d (steering m%d): it gets it as its next message.", id, m.ID))
}

// clip cuts s to at most n bytes at a character's boundary, saying so: for
// logs and the store (Slack's text is inert's to clip).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func lines(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 }

// appMention is the app_mention inside an events_api envelope.
func appMention(evt socketmode.Event) (*slackevents.AppMentionEvent, bool) {
	api, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || api.Type != slackevents.CallbackEvent {
		return nil, false
	}
	m, ok := api.InnerEvent.Data.(*slackevents.AppMentionEvent)
	return m, ok && m.BotID == ""
}
