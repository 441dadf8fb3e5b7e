package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options are what a console serves.
type Options struct {
	Workspace *workspace.Workspace
	// Supervision is the workspace's supervision service: every request,
	// prompt, alert, session and checkpoint the pages show or change goes
	// through it, with the rules and events of every other surface.
	Supervision *supervision.Service
	// Fleet is the workspace's fleet (nil: the fleet page says there is none).
	Fleet fleet.Backend
	// User is the person who acts through the page (who started the console).
	User string
	// Now is the clock (nil: time.Now); Getenv reads the environment (nil:
	// none): who the person is when User is "".
	Now    func() time.Time
	Getenv func(string) string
	// SessionLog follows a session's run log (nil: the fleet's logs of the
	// session's agent and run; a session of no agent shows its audit log only).
	SessionLog SessionLog
	// SessionIdle and SessionMax end a browser's session after that long
	// without a request, and that long after it signed in (0: the
	// defaults, DefaultSessionIdle and DefaultSessionMax).
	SessionIdle, SessionMax time.Duration
	// NoWatchers leaves out the file and fleet watchers (the store's and the
	// matrix's changes then reach the page only through what this process
	// publishes); for tests of the handlers alone.
	NoWatchers bool
}

// Server is a running console's handler.
type Server struct {
	o   Options
	svc *supervision.Service
	// actor is the console's person, acting through the web page.
	actor supervision.Actor
	auth  *auth
	tpl   *templates
	mux   *http.ServeMux
	ctx   context.Context
	// watchers are the goroutines that feed the bus; Serve waits for them
	// after ctx ends, so nothing writes in the workspace (the fleet
	// watcher's folders) once the console has returned.
	watchers sync.WaitGroup
}

// New prepares a console and starts what feeds its live updates (until ctx
// ends): the store's changes, the matrix file's and the fleet's, onto the bus.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Workspace == nil || o.Supervision == nil {
		return nil, errors.New("the console needs the workspace and its supervision service")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.User == "" {
		o.User = supervision.CurrentUser(o.Getenv)
	}
	if o.SessionLog == nil && o.Fleet != nil {
		if lr, ok := o.Fleet.(fleet.LogReader); ok {
			o.SessionLog = fleetLog{lr}
		}
	}
	tpl, err := loadTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, svc: o.Supervision, actor: supervision.Person(o.User, supervision.SurfaceWeb), auth: newAuth(o.Now, o.SessionIdle, o.SessionMax), tpl: tpl, ctx: ctx}
	if !o.NoWatchers {
		if err := s.svc.PublishChanges(ctx); err != nil {
			return nil, err
		}
		mw, err := task.WatchMatrix(ctx, o.Workspace, s.bus(), 50*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("watch the matrix: %w", err)
		}
		s.watchers.Go(func() { <-ctx.Done(); mw.Close() })
		if w, ok := o.Fleet.(fleet.Watcher); ok {
			s.watchers.Go(func() { w.Watch(ctx, s.bus(), time.Second) })
		}
	}
	s.routes()
	return s, nil
}

// bus is the process's event bus, the supervision service's: what the
// live pages follow, what the watchers publish on.
func (s *Server) bus() *events.Bus { return s.svc.Bus() }

// Link mints a one-time link to the console at base ("http://HOST:PORT").
func (s *Server) Link(base string) string {
	return strings.TrimRight(base, "/") + "/login?token=" + s.auth.mint()
}

// ServeHTTP serves the console's pages: /login without a cookie, the rest
// with one; every change must come from the page's own origin.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path == "/login" {
		s.login(w, r)
		return
	}
	if ok, why := s.auth.valid(r); !ok {
		msg := "unauthorized: open the link `agentinfra console` printed (each link works once; the page's \"Open on another device\" makes a new one)"
		if why != "" {
			msg = "unauthorized: this browser's session expired (" + why + "); run `agentinfra console` for a new link"
		}
		http.Error(w, msg, http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		http.Error(w, fmt.Sprintf("forbidden: a change must come from the console's own page (origin %q is not http://%s)", r.Header.Get("Origin"), r.Host), http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	c, ok := s.auth.redeem(r.URL.Query().Get("token"))
	if !ok {
		http.Error(w, "unauthorized: this link was used already, has expired or is wrong; run `agentinfra console` for a new one, or use \"Open on another device\" on a page that is signed in", http.StatusUnauthorized)
		return
	}
	setSessionCookie(w, r, c, s.auth.max)
	http.Redirect(w, r, "/inbox", http.StatusSeeOther) // the token leaves the address bar
}

// Guard is the hardening every console request goes through (httpguard:
// Host, Origin, time limits); the console's own cookie is the credential.
func Guard(h http.Handler) http.Handler { return httpguard.Handler(h, httpguard.Options{}) }

// Serve serves the console on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	// Every change is checked against the process at the other end of
	// its connection too: an agent's client is refused (supervision's
	// ErrInsideRun), whatever cookie it holds.
	err := httpguard.Serve(ctx, ln, s, httpguard.Options{ConnContext: supervision.WithConn}, 2*time.Second)
	s.Wait()
	return err
}

// Wait waits for the watchers New started; they end with New's context.
func (s *Server) Wait() { s.watchers.Wait() }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/inbox", http.StatusSeeOther) })
	m.HandleFunc("GET /events", s.events)
	m.HandleFunc("POST /link", s.newLink)

	m.HandleFunc("GET /inbox", s.inboxPage)
	m.HandleFunc("GET /inbox/list", s.inboxList)
	m.HandleFunc("GET /inbox/{id}/diff", s.wholeDiff)
	m.HandleFunc("POST /inbox/{id}/approve", s.approve)
	m.HandleFunc("POST /inbox/{id}/reject", s.reject)
	m.HandleFunc("POST /prompts/{id}/{action}", s.answerPrompt)
	m.HandleFunc("POST /alerts/{id}/{action}", s.answerAlert)

	m.HandleFunc("GET /sessions", s.sessionsPage)
	m.HandleFunc("GET /sessions/list", s.sessionsList)
	m.HandleFunc("GET /sessions/{id}", s.sessionPage)
	m.HandleFunc("GET /sessions/{id}/panel", s.sessionPanel)
	m.HandleFunc("POST /sessions/{id}/{action}", s.sessionAction)

	m.HandleFunc("GET /fleet", s.fleetPage)
	m.HandleFunc("GET /fleet/list", s.fleetList)
	m.HandleFunc("POST /fleet/create", s.fleetCreate)
	m.HandleFunc("POST /fleet/{name}/start", s.fleetStart)
	m.HandleFunc("POST /fleet/{name}/stop", s.fleetStop)

	m.HandleFunc("GET /board", s.boardPage)
	m.HandleFunc("GET /board/columns", s.boardColumns)
	m.HandleFunc("GET /board/task/{id}", s.taskPage)
	m.HandleFunc("POST /board/{id}/move", s.boardMove)

	m.HandleFunc("GET /review", s.reviewPage)
	m.HandleFunc("GET /review/list", s.reviewList)
	m.HandleFunc("GET /review/{id}", s.changePage)
	m.HandleFunc("GET /review/{id}/panel", s.changePanel)
	m.HandleFunc("POST /review/{id}/changes", s.reviewChanges)
	m.HandleFunc("POST /review/{id}/approve", s.reviewApprove)
	s.mux = m
}
