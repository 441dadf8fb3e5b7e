// Package codertest is a fake Coder deployment for tests: stateful and
// strict, built on the coder package's structs so that it answers with
// the field names of real Coder (v2.27) responses.
//
// Builds do not advance on their own: a test moves the clock with Advance
// (one step) or Settle (until nothing moves), so every intermediate state
// (pending, starting, agent connecting...) can be observed.
package codertest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// Routes, the keys of SetFault: the API's method and pattern, and the
// AgentAPI endpoints behind the app proxy (path and subdomain apps alike).
const (
	RouteOrganizations   = "GET /api/v2/users/me/organizations"
	RouteTemplates       = "GET /api/v2/templates"
	RoutePresets         = "GET /api/v2/templateversions/{id}/presets"
	RouteRichParameters  = "GET /api/v2/templateversions/{id}/rich-parameters"
	RouteWorkspaces      = "GET /api/v2/workspaces"
	RouteWorkspace       = "GET /api/v2/workspaces/{id}"
	RouteWorkspaceByName = "GET /api/v2/users/{user}/workspace/{name}"
	RouteCreateWorkspace = "POST /api/v2/organizations/{org}/members/{user}/workspaces"
	RouteCreateBuild     = "POST /api/v2/workspaces/{id}/builds"
	RouteBuildParameters = "GET /api/v2/workspacebuilds/{id}/parameters"
	RouteAppHost         = "GET /api/v2/applications/host"
	RouteAppStatus       = "GET app/status"
	RouteAppMessage      = "POST app/message"
	RouteAppMessages     = "GET app/messages"
	RouteAppEvents       = "GET app/events"
)

// Fault is a failure injected on a route.
type Fault int

// Faults.
const (
	NoFault Fault = iota
	// Fault5xx answers 503 with a Coder error body.
	Fault5xx
	// FaultTimeout never answers (until the client gives up).
	FaultTimeout
	// FaultLoginRedirect answers 303 to /login, as Coder's app proxy does
	// for a request without a valid session.
	FaultLoginRedirect
	// FaultNotFound answers 404 with Coder's body, as Coder does for a
	// resource the user may not read (a template version's presets) or a
	// deployment without the route.
	FaultNotFound
)

// Fixed names of the fake deployment.
const (
	AgentName   = "main"
	PromptParam = "AI Prompt"
)

// Server is a fake Coder deployment.
type Server struct {
	URL   string // the access URL
	Token string // the session token it accepts
	Owner string // the token's user

	ts           *httptest.Server
	addr         string
	done         chan struct{}
	closeOnce    sync.Once
	meta         metadataState
	apps         map[string]map[string]*servedApp // agent ID → slug → an app a test serves
	onAgentUp    func(name string, params map[string]string)
	appHost      string // wildcard app host; "" without subdomain apps
	appSlug      string
	lagInterrupt bool
	mu           sync.Mutex
	now          time.Time
	org          coder.Organization
	userID       string
	tmpls        []*template
	wss          []*workspace
	faults       map[string]Fault
	failNext     map[string]bool // lower(workspace name) → its next build fails
	requests     map[string]int  // route → requests seen
	lastQ        string
}

type template struct {
	t       coder.Template
	presets []coder.Preset
	params  []coder.TemplateVersionParameter
}

type workspace struct {
	ws      coder.Workspace
	params  []coder.WorkspaceBuildParameter
	agentID string
	appID   string
	// resourceID and aiTaskID stay the same across builds.
	resourceID string
	aiTaskID   string
	statuses   []coder.WorkspaceAppStatus
	agentapi   agentAPI
	agentUp    bool // the Coder agent connected and ready
	ownerName  string
}

type agentAPI struct {
	status   string
	messages []coder.AgentConversationMessage
	pending  string // the prompt the agent is working on
	// interrupted: an interrupt arrived and the next step makes the
	// agent stable (WithLaggingInterrupt).
	interrupted bool
	// subs are the open event streams; a stream whose buffer is full is
	// dropped, as the real AgentAPI drops a slow subscriber.
	subs map[chan appEvent]struct{}
}

// Option configures a Server.
type Option func(*Server)

// WithSubdomainApps serves the AgentAPI app as a subdomain app under the
// wildcard host *.apps.coder.test:{port}; use HTTPClient to reach it.
func WithSubdomainApps() Option { return func(s *Server) { s.appHost = "*.apps.coder.test" } }

// WithLaggingInterrupt keeps the AgentAPI running after an interrupt until
// the clock's next step, as the real one reports running until the
// agent's screen has been still for a while (2 s).
func WithLaggingInterrupt() Option { return func(s *Server) { s.lagInterrupt = true } }

// WithAppSlug names the AgentAPI app (default coder.DefaultAgentAPISlug).
func WithAppSlug(slug string) Option { return func(s *Server) { s.appSlug = slug } }

// New starts a fake Coder with one organization and one template,
// "agents" (display name "Agents") with presets Coder (default) and
// Operator; it is closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts the fake Coder of New outside a test (fleet/coder/codertest/fakecoder);
// Close stops it.
func Start(opts ...Option) (*Server, error) {
	s := &Server{Token: "fake-session-token-" + newID()[:8], Owner: "alice", appSlug: coder.DefaultAgentAPISlug,
		done: make(chan struct{}), now: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		faults: map[string]Fault{}, failNext: map[string]bool{}, requests: map[string]int{}, userID: newID()}
	for _, o := range opts {
		o(s)
	}
	s.org = coder.Organization{ID: newID(), Name: "coder", DisplayName: "Coder", Description: "Builtin default organization.",
		IsDefault: true, CreatedAt: s.now, UpdatedAt: s.now}
	s.AddTemplate("agents", "Agents", "Coder", "Operator")
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("codertest: listen on %s: %w", addr, err)
	}
	s.ts = httptest.NewUnstartedServer(s.routes())
	_ = s.ts.Listener.Close()
	s.ts.Listener = ln
	s.ts.Start()
	s.URL = s.ts.URL
	if s.appHost != "" {
		s.appHost += ":" + s.ts.URL[strings.LastIndex(s.ts.URL, ":")+1:]
	}
	return s, nil
}

// Close frees the requests still hanging (FaultTimeout, metadata
// streams), stops the clock of RunClock and the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// WithAddr listens on addr (default 127.0.0.1:0).
func WithAddr(addr string) Option { return func(s *Server) { s.addr = addr } }

// WithToken sets the session token the fake accepts (default a random one).
func WithToken(token string) Option { return func(s *Server) { s.Token = token } }

// WithStartTime sets the fake's clock (default 2026-01-05 09:00 UTC).
func WithStartTime(t time.Time) Option { return func(s *Server) { s.now = t.UTC() } }

// WithClockIn answers every time in loc, with nanoseconds, as a Coder
// whose server runs in that zone does (real responses carry +01:00 and
// the like): clients must convert them.
func WithClockIn(loc *time.Location) Option {
	return func(s *Server) { s.now = s.now.Add(123456789 * time.Nanosecond).In(loc) }
}

// RunClock calls Advance every step until Close, so that builds, agents
// and AgentAPI runs move on in real time (fleet/coder/codertest/fakecoder); tests use
// Advance and Settle instead.
func (s *Server) RunClock(step time.Duration) {
	go func() {
		tick := time.NewTicker(step)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				s.Advance()
			}
		}
	}()
}

// HTTPClient returns a client that reaches the fake for any host name, as
// subdomain apps need (*.apps.coder.test resolves nowhere).
func (s *Server) HTTPClient() *http.Client {
	addr := s.ts.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
}

// Config returns a coder.Config for the fake.
func (s *Server) Config() coder.Config {
	return coder.Config{URL: s.URL, Token: s.Token, Timeout: 5 * time.Second, HTTPClient: s.HTTPClient()}
}

// AddTemplate adds a template whose active version has the given presets
// (the first is the default) and the rich parameters "AI Prompt" and
// "system_prompt".
func (s *Server) AddTemplate(name, displayName string, presets ...string) coder.Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &template{t: coder.Template{ID: newID(), CreatedAt: s.now, UpdatedAt: s.now, OrganizationID: s.org.ID,
		OrganizationName: s.org.Name, Name: name, DisplayName: displayName, ActiveVersionID: newID()}}
	for i, p := range presets {
		t.presets = append(t.presets, coder.Preset{ID: newID(), Name: p, Default: i == 0,
			Parameters: []coder.PresetParameter{{Name: "system_prompt", Value: "You are the " + p + "."}}})
	}
	t.params = []coder.TemplateVersionParameter{
		{Name: PromptParam, Description: "Write a prompt for Claude Code", Type: "string", FormType: "input", Mutable: true},
		{Name: "system_prompt", DisplayName: "System Prompt", Type: "string", FormType: "textarea"},
	}
	s.tmpls = append(s.tmpls, t)
	return t.t
}

// AddForeignWorkspace adds a running workspace owned by someone else, which
// an admin token would see without owner:me.
func (s *Server) AddForeignWorkspace(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.newWorkspace(owner, name, s.tmpls[0], "", nil)
	w.ws.LatestBuild.Job.Status = coder.JobSucceeded
	s.settleBuild(w)
}

// SetFault injects f on route (one of the Route constants); NoFault clears it.
func (s *Server) SetFault(route string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == NoFault {
		delete(s.faults, route)
		return
	}
	s.faults[route] = f
}

// FailNextBuild makes the next build of workspace name fail.
func (s *Server) FailNextBuild(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[strings.ToLower(name)] = true
}

// Requests returns how many requests route has seen (faulted ones too).
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// LastQuery returns the q of the last GET /api/v2/workspaces.
func (s *Server) LastQuery() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastQ
}

// Advance moves the clock one step: every build job moves pending →
// running → succeeded (or failed, see FailNextBuild); a started workspace's
// agent connects and becomes ready one step after its build succeeds; an
// agent working on a message answers and goes stable; a deleted workspace
// disappears. It reports whether anything moved.
func (s *Server) Advance() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(time.Second)
	moved := false
	kept := s.wss[:0]
	for _, w := range s.wss {
		b := &w.ws.LatestBuild
		switch {
		case b.Job.Status == coder.JobPending:
			b.Job.Status = coder.JobRunning
			b.Job.StartedAt = ptr(s.now)
			moved = true
		case b.Job.Status == coder.JobRunning:
			if s.failNext[strings.ToLower(w.ws.Name)] {
				delete(s.failNext, strings.ToLower(w.ws.Name))
				b.Job.Status = coder.JobFailed
				b.Job.Error = "terraform apply failed (injected by codertest)"
			} else {
				b.Job.Status = coder.JobSucceeded
			}
			b.Job.CompletedAt = ptr(s.now)
			moved = true
		case b.Transition == coder.TransitionStart && b.Job.Status == coder.JobSucceeded && !w.agentUp:
			w.agentUp = true
			moved = true
			if fn := s.onAgentUp; fn != nil {
				params := map[string]string{}
				for _, p := range w.params {
					params[p.Name] = p.Value
				}
				go fn(w.ws.Name, params)
			}
			// As Coder's Claude Code module does, the agent starts on the
			// prompt parameter when it first comes up.
			if p := w.prompt(); p != "" && len(w.agentapi.messages) == 0 {
				s.startWork(w, p)
			}
		case w.agentapi.status == coder.AgentAPIRunning && w.agentapi.interrupted:
			s.setAgentStatus(w, coder.AgentAPIStable, "")
			s.appStatus(w, coder.AppStateIdle, "interrupted")
			moved = true
		case w.agentapi.status == coder.AgentAPIRunning:
			// The answer is on screen before the AgentAPI sees the screen
			// stable: message_update first, then status_change.
			s.addAgentMessage(w, "agent", "Done: "+w.agentapi.pending)
			s.setAgentStatus(w, coder.AgentAPIStable, "")
			s.appStatus(w, coder.AppStateIdle, "done")
			moved = true
		}
		s.settleBuild(w)
		if b.Transition == coder.TransitionDelete && b.Job.Status == coder.JobSucceeded {
			continue // gone: lists skip it, lookups answer 404
		}
		kept = append(kept, w)
	}
	s.wss = kept
	return moved
}

// prompt is the value of the workspace's prompt parameter ("" when none).
func (w *workspace) prompt() string {
	for _, p := range w.params {
		if p.Name == PromptParam {
			return p.Value
		}
	}
	return ""
}

// Settle advances until nothing moves.
func (s *Server) Settle() {
	for i := 0; i < 20 && s.Advance(); i++ {
	}
}

func ptr[T any](v T) *T { return &v }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg, detail string, validations ...coder.ValidationError) {
	writeJSON(w, status, coder.Response{Message: msg, Detail: detail, Validations: validations})
}
