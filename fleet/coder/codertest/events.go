package codertest

import (
	"encoding/json"
	"net/http"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// appEvent is one server-sent event of the AgentAPI's GET events.
type appEvent struct {
	typ  string
	data []byte
}

// eventBuffer is how many events a stream may lag behind before it is
// dropped (the real AgentAPI buffers 1024).
const eventBuffer = 256

func messageUpdate(m coder.AgentConversationMessage) appEvent {
	data, _ := json.Marshal(coder.AgentMessageUpdate{ID: m.ID, Role: m.Role, Message: m.Content, Time: m.Time})
	return appEvent{typ: coder.EventMessageUpdate, data: data}
}

func statusChange(status string) appEvent {
	data, _ := json.Marshal(coder.AgentStatusChange{Status: status, AgentType: agentType})
	return appEvent{typ: coder.EventStatusChange, data: data}
}

// agentType is the agent_type the fake AgentAPI reports.
const agentType = "claude"

// startWork makes w's agent take up prompt: it goes running, the prompt
// joins the conversation and the app reports working twice, as the
// recorded workspaces show: first without a message (Coder's AgentAPI
// watcher reports the screen moving), then with what the agent says it
// does (its coder_report_task). The caller holds s.mu.
func (s *Server) startWork(w *workspace, prompt string) {
	// The real AgentAPI's snapshot loop sends the status before the
	// messages.
	s.setAgentStatus(w, coder.AgentAPIRunning, prompt)
	s.addAgentMessage(w, "user", prompt)
	s.appStatus(w, coder.AppStateWorking, "")
	s.appStatus(w, coder.AppStateWorking, "working on: "+prompt)
}

// addAgentMessage adds a message to w's conversation and publishes it.
// The caller holds s.mu.
func (s *Server) addAgentMessage(w *workspace, role, content string) {
	m := coder.AgentConversationMessage{ID: len(w.agentapi.messages), Role: role, Content: content, Time: s.now}
	w.agentapi.messages = append(w.agentapi.messages, m)
	s.publish(w, messageUpdate(m))
}

// setAgentStatus sets w's AgentAPI status (and the prompt it works on)
// and publishes a change. The caller holds s.mu.
func (s *Server) setAgentStatus(w *workspace, status, pending string) {
	changed := w.agentapi.status != status
	w.agentapi.status, w.agentapi.pending, w.agentapi.interrupted = status, pending, false
	if changed {
		s.publish(w, statusChange(status))
	}
}

// publish sends ev to w's open streams without blocking; a stream that
// cannot take it is ended. The caller holds s.mu.
func (s *Server) publish(w *workspace, ev appEvent) {
	for ch := range w.agentapi.subs {
		select {
		case ch <- ev:
		default:
			close(ch)
			delete(w.agentapi.subs, ch)
		}
	}
}

// subscribe opens a stream of w's events and returns the events that give
// its current state, as the real AgentAPI does: a message_update per
// message, then a status_change. The caller holds s.mu.
func (s *Server) subscribe(w *workspace) (chan appEvent, []appEvent) {
	state := make([]appEvent, 0, len(w.agentapi.messages)+1)
	for _, m := range w.agentapi.messages {
		state = append(state, messageUpdate(m))
	}
	state = append(state, statusChange(w.agentapi.status))
	ch := make(chan appEvent, eventBuffer)
	if w.agentapi.subs == nil {
		w.agentapi.subs = map[chan appEvent]struct{}{}
	}
	w.agentapi.subs[ch] = struct{}{}
	return ch, state
}

// unsubscribe forgets ch unless it was already ended.
func (s *Server) unsubscribe(w *workspace, ch chan appEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(w.agentapi.subs, ch)
}

// appEvents streams w's AgentAPI events until the client leaves, the
// workspace's build replaces the AgentAPI, or the server closes. It holds
// s.mu only to subscribe and unsubscribe, never while writing.
func (s *Server) appEvents(rw http.ResponseWriter, r *http.Request, w *workspace, ch chan appEvent, state []appEvent) {
	defer s.unsubscribe(w, ch)
	// The AgentAPI's SSE headers (huma's sse package and its middleware).
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache, no-store, must-revalidate")
	rw.Header().Set("X-Accel-Buffering", "no")
	rw.WriteHeader(http.StatusOK)
	flusher, _ := rw.(http.Flusher)
	write := func(ev appEvent) bool {
		// huma writes "event: {type}", "data: " + the JSON and its
		// encoder's newline, then the blank line.
		_, err := rw.Write([]byte("event: " + ev.typ + "\ndata: " + string(ev.data) + "\n\n"))
		if flusher != nil {
			flusher.Flush()
		}
		return err == nil
	}
	for _, ev := range state {
		if !write(ev) {
			return
		}
	}
	for {
		select {
		case ev, ok := <-ch:
			if !ok || !write(ev) {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}
