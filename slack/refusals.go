package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/supervision"
)

// Refusals. Whatever Slack sends that is not done — a member not linked to
// an agentinfra user, one who may not act on the session, a session in
// local mode, a button whose value is malformed, names an item that does
// not exist or not the message it sits on, an unknown action — gets an
// answer only the member sees, and a slack_refused line in the audit log
// (who, what, why; what they sent clipped). Per member, refusalBurst
// refusals a refusalWindow are answered and recorded; more are counted and
// logged once: a member clicking in a loop cannot fill the audit log or
// the queue of ephemerals. The lines that name no session are purged with
// the retention (supervision.retention_days) like everything else.

const (
	refusalBurst  = 20
	refusalWindow = time.Minute
	// maxRefusalValue is how much of what was sent a refusal records.
	maxRefusalValue = 200
)

type refusalLimiter struct {
	mu   sync.Mutex
	byID map[string]*refusalCount
}

type refusalCount struct {
	since      time.Time
	n, dropped int
}

func newRefusalLimiter() *refusalLimiter {
	return &refusalLimiter{byID: map[string]*refusalCount{}}
}

// allow counts a refusal of user and reports whether it is answered; when
// a window with dropped refusals ends, dropped says how many were.
func (l *refusalLimiter) allow(user string) (ok bool, dropped int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.byID[user]
	if c == nil || now.Sub(c.since) >= refusalWindow {
		if c != nil {
			dropped = c.dropped
		}
		if len(l.byID) > 10000 { // forget the members of past windows
			for id, x := range l.byID {
				if now.Sub(x.since) >= refusalWindow {
					delete(l.byID, id)
				}
			}
		}
		c = &refusalCount{since: now}
		l.byID[user] = c
	}
	c.n++
	if c.n > refusalBurst {
		c.dropped++
		return false, dropped
	}
	return true, dropped
}

// refusal is what was refused: who, what they did, the item it was about.
type refusal struct {
	UserID, UserName, Person string
	Action, Value            string
	Channel, ThreadTS        string
	SessionID, RequestID     int64
}

func (c click) refusal(sessionID, requestID int64) refusal {
	return refusal{UserID: c.UserID, UserName: c.UserName, Person: c.Person, Action: c.Action, Value: c.Value,
		Channel: c.Channel, ThreadTS: c.ThreadTS, SessionID: sessionID, RequestID: requestID}
}

// record audits a refusal and reports whether it is to be answered (not
// over the member's limit).
func (s *Service) record(ctx context.Context, r refusal, why string) bool {
	ok, dropped := s.refusals.allow(r.UserID)
	if dropped > 0 {
		s.log.Warn("slack: refusals over the limit were neither answered nor recorded", "slack_user", r.UserID, "dropped", dropped, "window", refusalWindow)
	}
	if !ok {
		return false
	}
	who := r.Person
	if who == "" {
		who = "slack:" + clip(r.UserID, 40)
	}
	detail, _ := json.Marshal(map[string]any{"action": clip(r.Action, 100), "value": clip(r.Value, maxRefusalValue), "slack_user": clip(r.UserID, 40),
		"slack_name": clip(r.UserName, 100), "why": clip(why, 500)})
	if err := s.sup.Record(ctx, supervision.AuditEvent{SessionID: r.SessionID, RequestID: r.RequestID, Actor: who, Surface: supervision.SurfaceSlack,
		Action: supervision.ActionSlackRefused, Detail: detail}); err != nil {
		s.log.Warn("slack: audit a refusal", "err", err)
	}
	s.log.Info("slack: refused", "slack_user", clip(r.UserID, 40), "action", clip(r.Action, 100), "value", clip(r.Value, maxRefusalValue), "why", clip(why, 500))
	return true
}

// refuse answers a click or mention of someone who may not act: "Not
// allowed: why" (ours, with any agent text in it made inert by the
// caller), only to them, and the audit line.
func (s *Service) refuse(ctx context.Context, c click, sessionID, requestID int64, why string) error {
	return s.decline(ctx, c, sessionID, requestID, ":no_entry: Not allowed: "+why)
}

// decline answers any other refused click or mention with text, only to the
// member, and records it.
func (s *Service) decline(ctx context.Context, c click, sessionID, requestID int64, text string) error {
	if !s.record(ctx, c.refusal(sessionID, requestID), text) {
		return nil
	}
	return s.ephemeral(ctx, c.Channel, c.ThreadTS, c.UserID, text)
}

// notMapped is why an unknown Slack member may not act.
func (s *Service) notMapped(userID string) string {
	return fmt.Sprintf("your Slack account (%s) is not linked to an agentinfra user: an admin adds it under slack.users in .agent/config.yaml", inert(userID, oneLine, 40))
}
