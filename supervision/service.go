package supervision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// Service is the one way a person's surface — the terminal, the web
// console, Slack, the MCP server — reads or changes supervision state: the
// surfaces import it and never the store (internal/layering checks). Each
// change authorises its actor once (authorise: the session's owner or an
// operator), makes the store's compare-and-set, and publishes what changed
// on the events bus, whatever the surface. One Service per process (or per
// command), made with the store, the supervision config and the bus.
type Service struct {
	st     *store.Store
	owned  bool // Open opened st: Close closes it
	conf   Config
	ws     *workspace.Workspace
	getenv func(string) string
	bus    *events.Bus
	caller CallerCheck

	hosts       *hostSet
	hostTimeout time.Duration
	// life ends when the service is closed: the followers of the hosts.
	life context.Context
	end  context.CancelFunc
}

// Options make a Service.
type Options struct {
	// Store is the supervision store (New needs it; Open opens the
	// workspace's when nil).
	Store *store.Store
	// Config is the workspace's supervision section (who operates).
	Config Config
	// Workspace is where the policy file ("approve always"), the keep-moving
	// settings (the default nudge, the retention) and the events' Root are.
	Workspace *workspace.Workspace
	// Getenv is the person's environment, where their allowlist is (nil:
	// the workspace's).
	Getenv func(string) string
	// Bus receives every change (nil: events.Default()).
	Bus *events.Bus
	// Caller, when set, is asked first by every change and every check:
	// see CallerCheck.
	Caller CallerCheck
	// Reap runs once Open has opened the store, before anything is read
	// (package supervised's Reaper ends the sessions whose supervisor
	// died, so that what is listed and decided is what really waits).
	Reap func(context.Context, *store.Store) error
	// Hosts are the other machines whose sessions the service shows and
	// changes with its own (hosts.go); HostTimeout bounds one host's answer
	// to a merged read (0: DefaultHostTimeout).
	Hosts       []HostEntry
	HostTimeout time.Duration
}

// CallerCheck refuses a change by where it comes from rather than by who
// asks: issue 27's "agents cannot decide" refuses, with an error kind of
// its own, an actor whose process is inside a supervised run's process
// tree (an agent approving agents). nil: no such check.
type CallerCheck func(ctx context.Context, a Actor) error

// New makes a Service over o.Store.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Workspace == nil {
		return nil, errors.New("the supervision service needs the store and the workspace")
	}
	if o.Bus == nil {
		o.Bus = events.Default()
	}
	if o.Getenv == nil {
		o.Getenv = o.Workspace.Getenv
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	hosts, err := newHostSet(o.Hosts)
	if err != nil {
		return nil, err
	}
	if o.HostTimeout <= 0 {
		o.HostTimeout = DefaultHostTimeout
	}
	life, end := context.WithCancel(context.Background())
	return &Service{st: o.Store, conf: o.Config, ws: o.Workspace, getenv: o.Getenv, bus: o.Bus, caller: o.Caller,
		hosts: hosts, hostTimeout: o.HostTimeout, life: life, end: end}, nil
}

// Open makes the Service of workspace ws: its supervision section and its
// store (created on demand), then o.Reap. Close it when done.
func Open(ctx context.Context, ws *workspace.Workspace, o Options) (*Service, error) {
	conf, err := LoadConfig(ws)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenWorkspace(ctx, ws, StoreOptions(conf))
	if err != nil {
		return nil, err
	}
	if o.Reap != nil {
		if err := o.Reap(ctx, st); err != nil {
			st.Close()
			return nil, err
		}
	}
	o.Store, o.Config, o.Workspace = st, conf, ws
	s, err := New(o)
	if err != nil {
		st.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close stops the followers of the hosts, and closes the store when Open
// opened it.
func (s *Service) Close() error {
	s.end()
	if s.owned {
		return s.st.Close()
	}
	return nil
}

// Root is the workspace's root folder.
func (s *Service) Root() string { return s.ws.Root }

// Config is the supervision section the service works with.
func (s *Service) Config() Config { return s.conf }

// Actor is a person acting through a surface (terminal, web, slack).
type Actor struct {
	// Name is the agentinfra user, without the "@" (Person drops it: @ana
	// and ana are one person).
	Name    string
	Surface string
}

// Person is name acting through surface.
func Person(name, surface string) Actor {
	return Actor{Name: strings.TrimPrefix(strings.TrimSpace(name), "@"), Surface: surface}
}

// String is the actor as messages write a person: @name.
func (a Actor) String() string { return store.Handle(a.Name) }

// is reports whether the actor is the person name (with or without "@").
func (a Actor) is(name string) bool { return a.Name == strings.TrimPrefix(name, "@") }

// ErrNotAllowed is what every refusal of the service wraps: the actor is
// neither the session's owner nor an operator (agenterr kind forbidden:
// exit 7, HTTP 403).
var ErrNotAllowed = agenterr.New(agenterr.Forbidden, "not allowed")

// authorise is the one rule of who may change a session's state: its
// owner, or an operator of the config (supervision.operators), through a
// person's surface — after o.Caller's check. what says what was asked
// ("decide request 12") for the refusal, the one error a refused change
// gets; nothing has changed then.
func (s *Service) authorise(ctx context.Context, a Actor, ses Session, what string) error {
	if err := s.check(ctx, a); err != nil {
		return err
	}
	if a.is(ses.Owner) || slices.ContainsFunc(s.conf.Operators, a.is) {
		return nil
	}
	return &agenterr.Error{Kind: agenterr.Forbidden, Holder: ses.Owner, Err: ErrNotAllowed, Reason: fmt.Sprintf(
		"%s may not %s: only the session's owner %s or an operator (supervision.operators in .agent/config.yaml) may", a, what, store.Handle(ses.Owner))}
}

// check is what every change asks of its actor whatever the session: the
// caller check, a name, a person's surface.
func (s *Service) check(ctx context.Context, a Actor) error {
	if s.caller != nil {
		if err := s.caller(ctx, a); err != nil {
			return err
		}
	}
	if !slices.Contains(store.PeopleSurfaces, a.Surface) {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "surface", Value: a.Surface, Valid: store.PeopleSurfaces, Reason: "unknown surface"}
	}
	if a.Name == "" {
		return agenterr.Invalidf("by", "a change needs the name of the person who makes it ($%s)", EnvUser)
	}
	return nil
}

// May is the refusal a change of session ses would get from a, or nil: a
// surface asks first, so that a refused click changes nothing it shows.
func (s *Service) May(ctx context.Context, a Actor, ses Session, what string) error {
	if e, n, err := s.route(ses.ID); err != nil || e != nil {
		if err != nil {
			return err
		}
		// This machine checks the caller, the host who may.
		if err := s.check(ctx, a); err != nil {
			return err
		}
		return e.err(e.h.May(ctx, a, n, what))
	}
	return s.authorise(ctx, a, ses, what)
}

// publish puts a change on the bus, in the workspace's name.
func (s *Service) publish(e events.Event) {
	e.Root = s.ws.Root
	s.bus.Publish(e)
}
