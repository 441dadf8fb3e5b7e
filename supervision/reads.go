package supervision

import (
	"context"
	"io"
	"strings"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
)

// What the surfaces show. Reads are not authorised: whoever reaches a
// surface sees the workspace's sessions (changes are what authorise
// guards).

// Request reads one request.
func (s *Service) Request(ctx context.Context, id int64) (Request, error) {
	return s.st.Request(ctx, id)
}

// Requests lists a session's requests, oldest first.
func (s *Service) Requests(ctx context.Context, sessionID int64) ([]Request, error) {
	return s.st.Requests(ctx, sessionID)
}

// MaxDiffBytes is how much of a request's diff is kept with it and shown
// inline; a longer one is cut there (Request.DiffCut), whole in a file
// (WholeDiff).
const MaxDiffBytes = store.MaxDiffBytes

// WholeDiff opens the diff of request id as the agent asked it, for a
// person who asks for it whole: the request's own when it was not cut,
// else its file, checked against the size and SHA-256 the request
// recorded. The caller closes it.
func (s *Service) WholeDiff(ctx context.Context, id int64) (io.ReadCloser, Request, error) {
	r, err := s.st.Request(ctx, id)
	if err != nil {
		return nil, r, err
	}
	if !r.DiffCut() {
		return io.NopCloser(strings.NewReader(r.Diff)), r, nil
	}
	f, err := s.st.WholeDiff(r)
	if err != nil {
		return nil, r, err
	}
	return f, r, nil
}

// Prompt reads one continuation prompt.
func (s *Service) Prompt(ctx context.Context, id int64) (Prompt, error) { return s.st.Prompt(ctx, id) }

// Alert reads one stall alert.
func (s *Service) Alert(ctx context.Context, id int64) (Alert, error) { return s.st.Alert(ctx, id) }

// Session reads one session.
func (s *Service) Session(ctx context.Context, id int64) (Session, error) {
	return s.st.Session(ctx, id)
}

// Sessions lists sessions, newest first.
func (s *Service) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	return s.st.Sessions(ctx, f)
}

// Audit lists a session's audit log (0: every session's), oldest first.
func (s *Service) Audit(ctx context.Context, sessionID int64) ([]AuditEvent, error) {
	return s.st.Audit(ctx, sessionID)
}

// Inbox is what waits for a person, each list oldest first.
type Inbox struct {
	Requests []PendingView
	Prompts  []PromptView
	Alerts   []AlertView
}

// Len counts what waits.
func (i Inbox) Len() int { return len(i.Requests) + len(i.Prompts) + len(i.Alerts) }

// Inbox reads what waits for a person: the pending requests, prompts and
// active stall alerts of every session.
func (s *Service) Inbox(ctx context.Context) (Inbox, error) {
	var in Inbox
	var err error
	if in.Requests, err = s.st.Pending(ctx); err != nil {
		return in, err
	}
	if in.Prompts, err = s.st.PendingPrompts(ctx); err != nil {
		return in, err
	}
	in.Alerts, err = s.st.ActiveAlerts(ctx)
	return in, err
}

// Pending lists the pending requests of every session, oldest first.
func (s *Service) Pending(ctx context.Context) ([]PendingView, error) { return s.st.Pending(ctx) }

// Changes signals each time the store changes, from any process, until
// ctx ends (a watching inbox, a waiting prompt).
func (s *Service) Changes(ctx context.Context) (<-chan struct{}, error) { return s.st.Changes(ctx) }

// PublishChanges publishes events.SupervisionChanged on the service's bus
// each time the store changes, from any process, until ctx ends: how other
// processes' changes reach a live page.
func (s *Service) PublishChanges(ctx context.Context) error {
	return s.st.PublishChanges(ctx, s.bus, s.ws.Root)
}

// StoreOptions are the store's options under the config c.
func StoreOptions(c Config) store.Options {
	return store.Options{MaxSessions: c.MaxConcurrentSessions}
}

// Bus is where the service publishes its changes.
func (s *Service) Bus() *events.Bus { return s.bus }
