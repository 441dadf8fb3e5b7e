package codertest

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// An app of a workspace's agent that a test serves (the metadata app, an
// agentinfra host): the fake lists it on the agent and proxies requests to
// it as Coder does — the session token required (else the login redirect),
// taken off the request, the rest passed on (the app's own Authorization
// too) —, and a test can drop its connections (DropApp) as a proxy or a
// network that fails would.

// AppOptions describe a served app.
type AppOptions struct {
	Slug        string
	DisplayName string
	// Hidden apps are not shown in Coder's dashboard (the metadata app).
	Hidden bool
	// Route is the key of SetFault for every request to the app ("" =
	// "GET app:{slug}").
	Route string
}

// servedApp is an app a test serves.
type servedApp struct {
	id   string // stable across builds
	opts AppOptions
	h    http.Handler

	mu   sync.Mutex
	down bool
	live map[*context.CancelFunc]struct{} // requests in flight, cut by DropApp
}

// SetApp serves the app o describes on the owner's workspace name's agent
// with h: h sees the path after the app's prefix (path or subdomain app
// alike), without the session token, as behind Coder's proxy.
func (s *Server) SetApp(name string, o AppOptions, h http.Handler) error {
	if o.Route == "" {
		o.Route = "GET app:" + o.Slug
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.find(s.Owner, name)
	if w == nil {
		return fmt.Errorf("codertest: no workspace %q", name)
	}
	if s.apps == nil {
		s.apps = map[string]map[string]*servedApp{}
	}
	if s.apps[w.agentID] == nil {
		s.apps[w.agentID] = map[string]*servedApp{}
	}
	id := newID()
	if old := s.apps[w.agentID][o.Slug]; old != nil {
		id = old.id
	}
	s.apps[w.agentID][o.Slug] = &servedApp{id: id, opts: o, h: h, live: map[*context.CancelFunc]struct{}{}}
	s.settleBuild(w)
	return nil
}

// DropApp cuts every connection to the app slug of workspace name (an event
// stream ends where it is) and answers its requests as Coder's proxy does
// for an agent it cannot reach (502), until RestoreApp.
func (s *Server) DropApp(name, slug string) error {
	a, err := s.servedApp(name, slug)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = true
	for cancel := range a.live {
		(*cancel)()
	}
	return nil
}

// RestoreApp lets requests reach the app again.
func (s *Server) RestoreApp(name, slug string) error {
	a, err := s.servedApp(name, slug)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.down = false
	a.mu.Unlock()
	return nil
}

func (s *Server) servedApp(name, slug string) (*servedApp, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.find(s.Owner, name)
	if w == nil || s.apps[w.agentID][slug] == nil {
		return nil, fmt.Errorf("codertest: workspace %q has no app %q", name, slug)
	}
	return s.apps[w.agentID][slug], nil
}

// servedApps are the apps tests serve on w's agent, as the workspace
// lists them. The caller holds s.mu.
func (s *Server) servedApps(w *workspace) []coder.WorkspaceApp {
	var out []coder.WorkspaceApp
	for _, slug := range slices.Sorted(maps.Keys(s.apps[w.agentID])) {
		a := s.apps[w.agentID][slug]
		out = append(out, coder.WorkspaceApp{ID: a.id, URL: "http://localhost:7780/", Slug: a.opts.Slug,
			DisplayName: a.opts.DisplayName, Subdomain: s.appHost != "", SharingLevel: "owner", Health: "healthy",
			Hidden: a.opts.Hidden, Statuses: []coder.WorkspaceAppStatus{}})
	}
	return out
}

// serveApp answers a request to an app a test serves; false when t is
// another app.
func (s *Server) serveApp(w http.ResponseWriter, r *http.Request, t appTarget) bool {
	s.mu.Lock()
	ws := s.find(t.owner, t.workspace)
	var a *servedApp
	up := false
	if ws != nil && t.agent == AgentName {
		a = s.apps[ws.agentID][t.slug]
		up = ws.ws.LatestBuild.Status == coder.BuildRunning && ws.agentUp
	}
	s.mu.Unlock()
	if a == nil {
		return false
	}
	if s.fault(a.opts.Route, w, r) {
		return true
	}
	if r.Header.Get(coder.SessionTokenHeader) != s.Token {
		loginRedirect(w, r)
		return true
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// Close ends served streams too: httptest's Close waits for every
	// handler, and a client kept alive by a later cleanup would hang it.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-stop:
		}
	}()
	a.mu.Lock()
	down := a.down
	if !down {
		a.live[&cancel] = struct{}{}
	}
	a.mu.Unlock()
	switch {
	case !up:
		writeError(w, http.StatusBadGateway, "Agent not connected.", "the workspace is not running")
		return true
	case down:
		writeError(w, http.StatusBadGateway, "Agent not connected.", "the connection to the workspace's agent was lost (DropApp)")
		return true
	}
	defer func() {
		a.mu.Lock()
		delete(a.live, &cancel)
		a.mu.Unlock()
	}()
	r2 := r.Clone(ctx)
	r2.Header.Del(coder.SessionTokenHeader)
	r2.URL.Path, r2.URL.RawPath = "/"+t.endpoint, ""
	a.h.ServeHTTP(w, r2)
	return true
}
