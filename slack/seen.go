package slack

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/slack-go/slack/socketmode"
)

// Slack delivers an envelope again when it did not see the ack in time or
// the connection dropped: the same envelope_id (a resend), or a new one
// with the same event_id (an Events API retry); a click or a slash command
// carries its trigger_id. seen remembers these keys for seenFor, so that a
// redelivery is acked and handled once: a steering message queued once, a
// nudge sent once. In memory: one process handles the socket (the lease),
// and a redelivery comes within minutes.
type seen struct {
	mu   sync.Mutex
	keys map[string]time.Time
}

// seenFor is how long a delivery is remembered (Slack retries an event for
// about an hour at most).
const seenFor = 2 * time.Hour

// maxSeen bounds what is remembered: the oldest go first.
const maxSeen = 20000

func newSeen() *seen { return &seen{keys: map[string]time.Time{}} }

// first reports whether none of keys was seen, and remembers them all.
func (s *seen) first(keys ...string) bool {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if at, ok := s.keys[k]; ok && now.Sub(at) < seenFor {
			return false
		}
	}
	if len(s.keys)+len(keys) > maxSeen {
		s.prune(now)
	}
	for _, k := range keys {
		s.keys[k] = now
	}
	return true
}

// prune forgets what is older than seenFor, then the oldest half if that
// was not enough.
func (s *seen) prune(now time.Time) {
	for k, at := range s.keys {
		if now.Sub(at) >= seenFor {
			delete(s.keys, k)
		}
	}
	if len(s.keys) < maxSeen/2 {
		return
	}
	cut := now
	for _, at := range s.keys {
		if at.Before(cut) {
			cut = at
		}
	}
	// The midpoint in time between the oldest and now.
	cut = cut.Add(now.Sub(cut) / 2)
	for k, at := range s.keys {
		if at.Before(cut) {
			delete(s.keys, k)
		}
	}
}

// deliveryKeys are the keys of an envelope: its envelope_id, and the
// event_id or trigger_id of what it carries.
func deliveryKeys(req *socketmode.Request) []string {
	if req == nil {
		return nil
	}
	keys := []string{"envelope:" + req.EnvelopeID}
	var p struct {
		EventID   string `json:"event_id"`
		TriggerID string `json:"trigger_id"`
	}
	json.Unmarshal(req.Payload, &p)
	if p.EventID != "" {
		keys = append(keys, "event:"+p.EventID)
	}
	if p.TriggerID != "" {
		keys = append(keys, "trigger:"+p.TriggerID)
	}
	return keys
}
