package supervision

import (
	"context"
	"slices"
	"sync"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
)

// What the surfaces show. Reads are not authorised: whoever reaches a
// surface sees the workspace's sessions (changes are what authorise
// guards).

// Request reads one request.
func (s *Service) Request(ctx context.Context, id int64) (Request, error) {
	e, n, err := s.route(id)
	if err != nil || e != nil {
		return hostCall(e, err, func() (Request, error) { return e.h.Request(ctx, n) }, e.request)
	}
	return s.st.Request(ctx, id)
}

// Requests lists a session's requests, oldest first.
func (s *Service) Requests(ctx context.Context, sessionID int64) ([]Request, error) {
	e, n, err := s.route(sessionID)
	if err != nil || e != nil {
		return hostList(e, err, func() ([]Request, error) { return e.h.Requests(ctx, n) }, e.request)
	}
	return s.st.Requests(ctx, sessionID)
}

// Prompt reads one continuation prompt.
func (s *Service) Prompt(ctx context.Context, id int64) (Prompt, error) {
	e, n, err := s.route(id)
	if err != nil || e != nil {
		return hostCall(e, err, func() (Prompt, error) { return e.h.Prompt(ctx, n) }, e.prompt)
	}
	return s.st.Prompt(ctx, id)
}

// Alert reads one stall alert.
func (s *Service) Alert(ctx context.Context, id int64) (Alert, error) {
	e, n, err := s.route(id)
	if err != nil || e != nil {
		return hostCall(e, err, func() (Alert, error) { return e.h.Alert(ctx, n) }, e.alert)
	}
	return s.st.Alert(ctx, id)
}

// Session reads one session.
func (s *Service) Session(ctx context.Context, id int64) (Session, error) {
	e, n, err := s.route(id)
	if err != nil || e != nil {
		return hostCall(e, err, func() (Session, error) { return e.h.Session(ctx, n) }, e.session)
	}
	return s.st.Session(ctx, id)
}

// Sessions lists sessions, newest first: this machine's and every
// reachable host's (Hosts says which could not be reached).
func (s *Service) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	out, err := s.st.Sessions(ctx, f)
	if err != nil || len(s.hosts.list) == 0 {
		return out, err
	}
	var mu sync.Mutex
	s.eachHost(ctx, func(ctx context.Context, e *hostEntry) {
		ss, err := e.h.Sessions(ctx, f)
		if err != nil {
			return // the host's state says so
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range ss {
			out = append(out, e.session(v))
		}
	})
	slices.SortStableFunc(out, func(a, b Session) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Audit lists a session's audit log (0: every session's of this machine),
// oldest first.
func (s *Service) Audit(ctx context.Context, sessionID int64) ([]AuditEvent, error) {
	e, n, err := s.route(sessionID)
	if err != nil || e != nil {
		return hostList(e, err, func() ([]AuditEvent, error) { return e.h.Audit(ctx, n) }, e.event)
	}
	return s.st.Audit(ctx, sessionID)
}

// Inbox is what waits for a person, each list oldest first.
type Inbox struct {
	Requests []PendingView
	Prompts  []PromptView
	Alerts   []AlertView
	// Hosts says, for a service with hosts, whether each could be reached
	// (the items of one that could not are not in the lists).
	Hosts []HostState
}

// Len counts what waits.
func (i Inbox) Len() int { return len(i.Requests) + len(i.Prompts) + len(i.Alerts) }

// Inbox reads what waits for a person: the pending requests, prompts and
// active stall alerts of every session, this machine's and every reachable
// host's.
func (s *Service) Inbox(ctx context.Context) (Inbox, error) {
	var in Inbox
	var err error
	if in.Requests, err = s.st.Pending(ctx); err != nil {
		return in, err
	}
	if in.Prompts, err = s.st.PendingPrompts(ctx); err != nil {
		return in, err
	}
	if in.Alerts, err = s.st.ActiveAlerts(ctx); err != nil {
		return in, err
	}
	if len(s.hosts.list) == 0 {
		return in, nil
	}
	var mu sync.Mutex
	s.eachHost(ctx, func(ctx context.Context, e *hostEntry) {
		hin, err := e.h.Inbox(ctx)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range hin.Requests {
			v.Request = e.request(v.Request)
			in.Requests = append(in.Requests, v)
		}
		for _, v := range hin.Prompts {
			v.Prompt = e.prompt(v.Prompt)
			in.Prompts = append(in.Prompts, v)
		}
		for _, v := range hin.Alerts {
			v.Alert = e.alert(v.Alert)
			in.Alerts = append(in.Alerts, v)
		}
	})
	slices.SortStableFunc(in.Requests, func(a, b PendingView) int { return a.CreatedAt.Compare(b.CreatedAt) })
	slices.SortStableFunc(in.Prompts, func(a, b PromptView) int { return a.CreatedAt.Compare(b.CreatedAt) })
	slices.SortStableFunc(in.Alerts, func(a, b AlertView) int { return a.RaisedAt.Compare(b.RaisedAt) })
	in.Hosts = s.Hosts()
	return in, nil
}

// Pending lists the pending requests of every session, oldest first.
func (s *Service) Pending(ctx context.Context) ([]PendingView, error) {
	if len(s.hosts.list) == 0 {
		return s.st.Pending(ctx)
	}
	in, err := s.Inbox(ctx)
	return in.Requests, err
}

// hostCall is one read or change of a host's item: the route's error, else
// the host's answer with this service's IDs.
func hostCall[T any](e *hostEntry, routeErr error, call func() (T, error), conv func(T) T) (T, error) {
	var zero T
	if routeErr != nil {
		return zero, routeErr
	}
	v, err := call()
	if err != nil {
		return zero, e.err(err)
	}
	return conv(v), nil
}

// hostList is hostCall for a list.
func hostList[T any](e *hostEntry, routeErr error, call func() ([]T, error), conv func(T) T) ([]T, error) {
	if routeErr != nil {
		return nil, routeErr
	}
	vs, err := call()
	if err != nil {
		return nil, e.err(err)
	}
	for i := range vs {
		vs[i] = conv(vs[i])
	}
	return vs, nil
}

// StoreOptions are the store's options under the config c.
func StoreOptions(c Config) store.Options {
	return store.Options{MaxSessions: c.MaxConcurrentSessions}
}

// Bus is where the service publishes its changes.
func (s *Service) Bus() *events.Bus { return s.bus }
