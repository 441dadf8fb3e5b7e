package slack

import (
	"context"
	"encoding/json"
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
// Sessions and approval requests are kinds; a continuation prompt and a
// stall alert are one more kind each, over the same feed (their audit
// actions) and the same click and text plumbing.
type kind interface {
	// handles says whether an audit action is this kind's.
	handles(action string) bool
	// onAudit posts or updates the message of the event's item.
	onAudit(ctx context.Context, s *Service, ev supervision.AuditEvent, ses supervision.Session) error
	// buttons lists the action_ids of its buttons.
	buttons() []string
	// onClick answers a click from a person allowed to act (the kind
	// checks that: who may act depends on the item).
	onClick(ctx context.Context, s *Service, c click) error
	// onText answers the text a person gave to a question it asked.
	onText(ctx context.Context, s *Service, in input, text string) error
}

// click is one button press.
type click struct {
	Action   string // the button's action_id
	Value    string // its value: the item's ID
	UserID   string // Slack member
	UserName string
	Person   string // the agentinfra user (config's slack.users); "" when unknown
	Channel  string
	TS       string // the clicked message
	ThreadTS string
}

func (c click) id() (int64, error) { return strconv.ParseInt(c.Value, 10, 64) }

// actor is the clicker as the supervision service knows them.
func (c click) actor() supervision.Actor {
	return supervision.Person(c.Person, supervision.SurfaceSlack)
}

func (s *Service) onInteractive(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	for _, a := range cb.ActionCallback.BlockActions {
		c := click{Action: a.ActionID, Value: a.Value, UserID: cb.User.ID, UserName: cb.User.Name, Channel: cb.Channel.ID,
			TS: cb.Container.MessageTs, ThreadTS: cb.Container.ThreadTs}
		if c.Channel == "" {
			c.Channel = cb.Container.ChannelID
		}
		if c.ThreadTS == "" {
			c.ThreadTS = cb.Message.ThreadTimestamp
		}
		c.Person, _ = s.conf.person(c.UserID)
		for _, k := range s.kinds {
			if slices.Contains(k.buttons(), c.Action) {
				if err := k.onClick(ctx, s, c); err != nil {
					s.log.Warn("slack: click", "action", c.Action, "value", c.Value, "user", c.UserID, "err", err)
				}
			}
		}
	}
}

// refuse answers someone who may not act: an ephemeral "not allowed" (it
// is never silently dropped) and an entry in the audit log.
func (s *Service) refuse(ctx context.Context, c click, sessionID, requestID int64, why string) error {
	who := c.Person
	if who == "" {
		who = "slack:" + c.UserID
	}
	detail, _ := json.Marshal(map[string]any{"action": c.Action, "value": c.Value, "slack_user": c.UserID, "slack_name": c.UserName, "why": why})
	rerr := s.sup.Record(ctx, supervision.AuditEvent{SessionID: sessionID, RequestID: requestID, Actor: who, Surface: supervision.SurfaceSlack, Action: "slack_refused", Detail: detail})
	eerr := s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, ":no_entry: Not allowed: "+why)
	if rerr != nil {
		return rerr
	}
	return eerr
}

// notMapped is why an unknown Slack member may not act.
func (s *Service) notMapped(c click) string {
	return fmt.Sprintf("your Slack account (%s) is not linked to an agentinfra user: an admin adds it under slack.users in .agent/config.yaml", c.UserID)
}

// input is a question asked in a thread, waiting for one person's
// threaded reply that mentions the app.
type input struct {
	Kind     string // the kind's name (its buttons()[0])
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
// thread, else (in a session's thread) a steering message.
func (s *Service) onEventsAPI(ctx context.Context, evt socketmode.Event) {
	ev, ok := appMention(evt)
	if !ok {
		return
	}
	text := s.stripMention(ev.Text)
	if ev.ThreadTimeStamp == "" {
		return
	}
	if in, ok := s.inputs.take(ev.Channel, ev.ThreadTimeStamp, ev.User); ok {
		for _, k := range s.kinds {
			if k.buttons()[0] == in.Kind {
				if err := k.onText(ctx, s, in, text); err != nil {
					s.log.Warn("slack: answer", "kind", in.Kind, "item", in.ItemID, "err", err)
				}
				return
			}
		}
		return
	}
	s.onThreadMention(ctx, ev.Channel, ev.ThreadTimeStamp, ev.User, text)
}

// onThreadMention is an @app reply in a session's thread that answers no
// question: a steering message, delivered to the agent as its next user
// message by the session's supervisor (queued until the CLI can take it).
func (s *Service) onThreadMention(ctx context.Context, channel, threadTS, userID, text string) {
	id, err := s.sup.SessionOfThread(ctx, supervision.SurfaceSlack, channel, threadTS)
	if err != nil {
		s.ephemeral(ctx, channel, threadTS, userID, "This thread is not a supervised session's: mention the app in a session's thread to send its agent a message, or see `/agentinfra help`.")
		return
	}
	ses, err := s.sup.Session(ctx, id)
	if err != nil {
		return
	}
	c := click{Action: "steer", Value: text, UserID: userID, Channel: channel, ThreadTS: threadTS}
	c.Person, _ = s.conf.person(userID)
	if ok, err := s.allowed(ctx, c, ses, 0, fmt.Sprintf("steer session %d", id)); !ok {
		if err != nil {
			s.log.Warn("slack: refuse steering", "err", err)
		}
		return
	}
	if strings.TrimSpace(text) == "" {
		s.ephemeral(ctx, channel, threadTS, userID, "Nothing to send: write the message after the mention.")
		return
	}
	m, err := s.sup.Steer(ctx, c.actor(), id, text)
	if err != nil {
		s.ephemeral(ctx, channel, threadTS, userID, fmt.Sprintf("Not sent to session %d: %v", id, err))
		return
	}
	s.ephemeral(ctx, channel, threadTS, userID, fmt.Sprintf("Queued for the agent of session %d (steering m%d): it gets it as its next message.", id, m.ID))
}

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
