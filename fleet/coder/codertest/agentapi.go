package codertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// appTarget is the app a proxied request addresses.
type appTarget struct {
	owner, workspace, agent, slug, endpoint string
}

func (s *Server) isAppRequest(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/@") || s.subdomainLabel(r.Host) != ""
}

// subdomainLabel returns the app label of host under the wildcard app
// host ("" when host is not an app host).
func (s *Server) subdomainLabel(host string) string {
	if s.appHost == "" {
		return ""
	}
	suffix := strings.ToLower(s.appHost[1:])
	host = strings.ToLower(host)
	if !strings.HasSuffix(host, suffix) || len(host) == len(suffix) {
		return ""
	}
	return host[:len(host)-len(suffix)]
}

// parseApp reads the target of a path app
// (/@{owner}/{workspace}.{agent}/apps/{slug}/{endpoint}, each name
// escaped) or of a subdomain app ({slug}--{agent}--{workspace}--{owner}).
func (s *Server) parseApp(r *http.Request) (appTarget, bool) {
	if label := s.subdomainLabel(r.Host); label != "" {
		parts := strings.Split(label, "--")
		if len(parts) != 4 {
			return appTarget{}, false
		}
		return appTarget{slug: parts[0], agent: parts[1], workspace: parts[2], owner: parts[3],
			endpoint: strings.Trim(r.URL.Path, "/")}, true
	}
	segs := strings.SplitN(strings.TrimPrefix(r.URL.EscapedPath(), "/@"), "/", 5)
	if len(segs) < 4 || segs[2] != "apps" {
		return appTarget{}, false
	}
	wsAgent, err := url.PathUnescape(segs[1])
	ws, agent, ok := strings.Cut(wsAgent, ".")
	if err != nil || !ok {
		return appTarget{}, false
	}
	t := appTarget{workspace: ws, agent: agent}
	if t.owner, err = url.PathUnescape(segs[0]); err != nil {
		return appTarget{}, false
	}
	if t.slug, err = url.PathUnescape(segs[3]); err != nil {
		return appTarget{}, false
	}
	if len(segs) == 5 {
		t.endpoint = strings.Trim(segs[4], "/")
	}
	return t, true
}

// app serves the AgentAPI of a workspace behind the app proxy: the
// session token is required (without it Coder redirects to /login), the
// workspace must be running with its agent ready (else 502, as Coder's
// proxy answers for an unreachable agent).
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	t, ok := s.parseApp(r)
	if !ok {
		writeError(w, http.StatusNotFound, "Application not found.", r.URL.Path)
		return
	}
	if s.serveApp(w, r, t) {
		return
	}
	route := r.Method + " app/" + t.endpoint
	if s.fault(route, w, r) {
		return
	}
	if r.Header.Get(coder.SessionTokenHeader) != s.Token {
		loginRedirect(w, r)
		return
	}
	s.mu.Lock()
	ws := s.find(t.owner, t.workspace)
	if ws == nil || t.agent != AgentName || t.slug != s.appSlug {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Application not found.", fmt.Sprintf("%+v", t))
		return
	}
	if ws.ws.LatestBuild.Status != coder.BuildRunning || !ws.agentUp {
		status := ws.ws.LatestBuild.Status
		s.mu.Unlock()
		writeError(w, http.StatusBadGateway, "Agent not connected.", "the workspace is "+status)
		return
	}
	if route == RouteAppEvents {
		ch, state := s.subscribe(ws)
		s.mu.Unlock() // a stream must not hold the lock
		s.appEvents(w, r, ws, ch, state)
		return
	}
	defer s.mu.Unlock()
	api := &ws.agentapi
	switch route {
	case RouteAppStatus:
		writeJSON(w, http.StatusOK, coder.AgentStatus{Status: api.status, AgentType: agentType})
	case RouteAppMessages:
		msgs := append([]coder.AgentConversationMessage{}, api.messages...)
		writeJSON(w, http.StatusOK, coder.AgentMessages{Messages: msgs})
	case RouteAppMessage:
		var m coder.AgentMessage
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil || (m.Type != coder.MessageUser && m.Type != coder.MessageRaw) {
			writeError(w, http.StatusUnprocessableEntity, "validation failed", fmt.Sprintf("bad message %+v: %v", m, err))
			return
		}
		switch {
		case m.Type == coder.MessageRaw && m.Content == coder.Interrupt:
			if api.status == coder.AgentAPIRunning && s.lagInterrupt {
				api.interrupted = true
			} else if api.status == coder.AgentAPIRunning {
				s.setAgentStatus(ws, coder.AgentAPIStable, "")
				s.appStatus(ws, coder.AppStateIdle, "interrupted")
			}
		case m.Type == coder.MessageRaw:
		case api.status != coder.AgentAPIStable:
			// The real AgentAPI refuses a user message while the agent
			// works, with a 500 problem body (huma).
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]any{"title": "Internal Server Error", "status": 500,
				"detail": "failed to send message: message can only be sent when the agent is waiting for user input"})
			return
		default:
			s.startWork(ws, m.Content)
		}
		s.settleBuild(ws)
		writeJSON(w, http.StatusOK, coder.AgentMessageResponse{OK: true})
	default:
		writeError(w, http.StatusNotFound, "Not found.", t.endpoint)
	}
}
