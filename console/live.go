package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// The topics a page's live regions listen to (data-live in the templates).
const (
	topicInbox    = "inbox"
	topicSessions = "sessions"
	topicFleet    = "fleet"
	topicBoard    = "board"
	topicReview   = "review"
)

// topicsOf says which regions an event makes stale.
func topicsOf(k events.Kind) []string {
	switch k {
	case events.SupervisionChanged, events.RequestChanged, events.PromptChanged, events.AlertChanged, events.SessionChanged:
		// The Fleet's and the Board's cards say what their sessions wait for.
		return []string{topicInbox, topicSessions, topicFleet, topicBoard}
	case events.SessionsPurged:
		return []string{topicInbox, topicSessions}
	case events.SteeringChanged, events.CheckpointChanged: // the session page's steering and checkpoints
		return []string{topicSessions}
	case events.TaskChanged, events.MatrixChanged:
		return []string{topicBoard, topicReview}
	case events.ChangeReviewed:
		return []string{topicReview, topicBoard}
	case events.AgentCreated, events.AgentDeleted, events.AgentChanged, events.RunStarted, events.RunEnded:
		return []string{topicFleet, topicSessions}
	case events.Lagged: // events were lost: everything may be stale
		return []string{topicInbox, topicSessions, topicFleet, topicBoard, topicReview}
	}
	return nil
}

var liveKinds = []events.Kind{events.SupervisionChanged, events.RequestChanged, events.PromptChanged, events.AlertChanged, events.SessionChanged,
	events.SteeringChanged, events.CheckpointChanged, events.SessionsPurged, events.TaskChanged, events.MatrixChanged, events.AgentCreated,
	events.AgentDeleted, events.AgentChanged, events.RunStarted, events.RunEnded, events.ChangeReviewed}

// heartbeat keeps proxies and phones from closing a quiet stream.
const heartbeat = 20 * time.Second

// events is the page's server-sent event stream: "hello" once connected,
// then one event per stale topic (the page re-reads those regions; the
// inbox's carries the pending count), and with ?session=ID the session's
// run log as "log" events of rendered items.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	sub := s.bus().Subscribe(events.Filter{Kinds: liveKinds}, 1024)
	defer sub.Close()
	ctx := r.Context()
	logs := make(chan string, 256)
	if id, err := strconv.ParseInt(r.URL.Query().Get("session"), 10, 64); err == nil && s.o.SessionLog != nil {
		if ses, err := s.svc.Session(ctx, id); err == nil {
			go func() {
				s.o.SessionLog.Follow(ctx, ses, func(it events.RunItem) error {
					var b bytes.Buffer
					if err := s.tpl.pages["session"].ExecuteTemplate(&b, "log-item", it); err != nil {
						return err
					}
					select {
					case logs <- b.String():
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
			}()
		}
	}
	send := func(event, data string) bool {
		var b strings.Builder
		fmt.Fprintf(&b, "event: %s\n", event)
		for _, l := range strings.Split(termsafe.Visible(data), "\n") { // as render shows it
			fmt.Fprintf(&b, "data: %s\n", l)
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("hello", `{}`) {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
			if ok, _ := s.auth.valid(r); !ok {
				return // the session expired: the page's reconnect gets the 401
			}
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		case item := <-logs:
			if !send("log", item) {
				return
			}
		case <-sub.Ready():
			stale := map[string]bool{}
			for {
				e, ok := sub.TryNext()
				if !ok {
					break
				}
				if e.Root != "" && e.Root != s.o.Workspace.Root {
					continue
				}
				for _, t := range topicsOf(e.Kind) {
					stale[t] = true
				}
			}
			for _, t := range []string{topicInbox, topicSessions, topicFleet, topicBoard, topicReview} {
				if !stale[t] {
					continue
				}
				data := "{}"
				if t == topicInbox {
					if items, err := s.waiting(ctx); err == nil {
						b, _ := json.Marshal(map[string]any{"pending": len(items), "items": items})
						data = string(b)
					}
				}
				if !send(t, data) {
					return
				}
			}
		}
	}
}
