package supervision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
)

// Hosts are the supervision services of other machines — each the
// `agentinfra agent host` of a Coder workspace, reached through Coder's
// app proxy (package supervision/host) — whose sessions this service shows
// and changes with its own: the reads merge them (each item says its Host),
// and a change of one of their items is forwarded to its host, whose store
// makes the compare-and-set (the first answer wins across machines too).
// What the surfaces call does not change: an item of host number n whose
// ID there is id has the ID n*HostIDBase+id here, so that every surface
// passes it around as any other ID.

// HostIDBase separates the hosts' IDs from this machine's: an item of host
// number n (1, 2, ...) with ID id on its host is n*HostIDBase + id here; an
// ID below it is this machine's.
const HostIDBase int64 = 1_000_000_000

// Host is one other machine's supervision service, as package
// supervision/host's client reaches it: the Service's reads and changes in
// the host's own IDs (the Service translates them), the host's audit log as
// a stream, and whether it could be reached.
type Host interface {
	// Name is the host's name as items show it (the Coder workspace's).
	Name() string

	Inbox(ctx context.Context) (Inbox, error)
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	Session(ctx context.Context, id int64) (Session, error)
	Request(ctx context.Context, id int64) (Request, error)
	Requests(ctx context.Context, sessionID int64) ([]Request, error)
	Prompt(ctx context.Context, id int64) (Prompt, error)
	Alert(ctx context.Context, id int64) (Alert, error)
	Audit(ctx context.Context, sessionID int64) ([]AuditEvent, error)
	Checkpoints(ctx context.Context, sessionID int64) ([]Checkpoint, error)
	Checkpoint(ctx context.Context, id int64) (Checkpoint, error)
	Diverged(ctx context.Context, checkpointID int64) ([]CheckpointChange, error)
	PlanAlways(ctx context.Context, id int64) (HostPlan, error)

	// May is the host's refusal of what a may do to session id, or nil.
	May(ctx context.Context, a Actor, sessionID int64, what string) error
	Decide(ctx context.Context, a Actor, d HostDecision) (Request, error)
	AnswerPrompt(ctx context.Context, a Actor, ans PromptAnswer) (Prompt, error)
	AnswerAlert(ctx context.Context, a Actor, ans AlertAnswer) (Alert, error)
	SetWatchdog(ctx context.Context, a Actor, sessionID int64, paused bool) error
	MoveSession(ctx context.Context, a Actor, id int64, to, reason string) (Session, error)
	SetMode(ctx context.Context, a Actor, id int64, mode string) (Session, error)
	SetChannel(ctx context.Context, a Actor, id int64, channel string) error
	Steer(ctx context.Context, a Actor, id int64, text string) (Steering, error)
	CreateCheckpoint(ctx context.Context, a Actor, id int64, label string) (Checkpoint, error)
	RestoreCheckpoint(ctx context.Context, a Actor, r Restore) (Checkpoint, []CheckpointChange, error)
	// Resume resumes session id on the host (Service.Resume there).
	Resume(ctx context.Context, a Actor, id int64) (Resumed, error)

	// What a remote surface keeps of a host's items lives in the host's
	// store, with them (purged with their sessions).
	PutPost(ctx context.Context, p Post) error
	PostOf(ctx context.Context, surface, item string, id int64) (Post, error)
	SetPostState(ctx context.Context, surface, item string, id int64, from, to string) (bool, error)
	SessionOfThread(ctx context.Context, surface, channel, ts string) (int64, error)
	Record(ctx context.Context, e AuditEvent) error

	// LastAuditSeq is the number of the host's newest audit event.
	LastAuditSeq(ctx context.Context) (int64, error)
	// Follow calls fn with each audit event of the host after seq after
	// (after < 0: after the newest, nothing of the past), oldest first,
	// until fn fails, ctx ends or the stream breaks (the error says which);
	// the caller follows again from the last event it took. opened is
	// called once the host answered, with its newest event's number.
	Follow(ctx context.Context, after int64, opened func(last int64), fn func(AuditEvent) error) error
	// Down reports since when the host could not be reached, and why
	// (zero: it answered the last time it was asked).
	Down() (since time.Time, why string)
}

// HostPlan is "approve always" as a host plans it (PlanAlways): the rule,
// its diff of the host's policy file, the note.
type HostPlan struct {
	Rule        string `json:"rule"`
	Key         string `json:"key"`
	Value       string `json:"value"`
	Diff        string `json:"diff"`
	Note        string `json:"note,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// HostDecision is a Decision as a host takes it: Always is the
// fingerprint of the plan the person saw ("" when not "approve always");
// the host plans again and refuses a plan that changed.
type HostDecision struct {
	Request int64  `json:"request"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason,omitempty"`
	Always  string `json:"always,omitempty"`
	// Session is "approve for this session", taken by the host.
	Session bool `json:"session,omitempty"`
}

// HostEntry is a host and its number (HostIDBase).
type HostEntry struct {
	Number int64
	Host   Host
}

// HostState is whether a host could be reached: since when it could not,
// and why.
type HostState struct {
	Name      string    `json:"name"`
	Reachable bool      `json:"reachable"`
	DownSince time.Time `json:"down_since,omitzero"`
	Error     string    `json:"error,omitempty"`
}

// hostEntry is a host as the service routes to it.
type hostEntry struct {
	n    int64
	h    Host
	name string
}

// hostSet is the service's hosts, by number.
type hostSet struct {
	byNumber map[int64]*hostEntry
	list     []*hostEntry

	watchOnce sync.Once
	watch     *broadcast // a signal per event of any host, once watched
}

func newHostSet(entries []HostEntry) (*hostSet, error) {
	hs := &hostSet{byNumber: map[int64]*hostEntry{}}
	names := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.Host == nil || e.Number <= 0:
			return nil, fmt.Errorf("host %d: a host needs a number above 0 and its client", e.Number)
		case hs.byNumber[e.Number] != nil:
			return nil, fmt.Errorf("hosts %s and %s have the same number %d", hs.byNumber[e.Number].name, e.Host.Name(), e.Number)
		case names[e.Host.Name()]:
			return nil, fmt.Errorf("two hosts are called %s", e.Host.Name())
		}
		he := &hostEntry{n: e.Number, h: e.Host, name: e.Host.Name()}
		hs.byNumber[e.Number] = he
		hs.list = append(hs.list, he)
		names[he.name] = true
	}
	return hs, nil
}

// route is the host of id and id on it; nil for an ID of this machine. An
// ID of a host this service does not know is not found.
func (s *Service) route(id int64) (*hostEntry, int64, error) {
	if id < HostIDBase {
		return nil, id, nil
	}
	n := id / HostIDBase
	if e := s.hosts.byNumber[n]; e != nil {
		return e, id % HostIDBase, nil
	}
	return nil, 0, &agenterr.Error{Kind: agenterr.NotFound, Field: "id", Value: strconv.FormatInt(id, 10), Err: ErrNotFound,
		Reason: fmt.Sprintf("ID %d is an item of host number %d, which this workspace does not know (agentinfra agent list --backend coder lists the supervised workspaces)", id, n)}
}

// Hosts says whether each host could be reached when it was last asked.
func (s *Service) Hosts() []HostState {
	out := make([]HostState, 0, len(s.hosts.list))
	for _, e := range s.hosts.list {
		since, why := e.h.Down()
		out = append(out, HostState{Name: e.name, Reachable: since.IsZero(), DownSince: since, Error: why})
	}
	return out
}

// id is a host's ID as this service shows it.
func (e *hostEntry) id(native int64) int64 {
	if native <= 0 {
		return native
	}
	return e.n*HostIDBase + native
}

// native is an ID of this service as the host knows it (0 for an ID that
// is not the host's).
func (e *hostEntry) native(id int64) int64 {
	if id/HostIDBase != e.n {
		return 0
	}
	return id % HostIDBase
}

func (e *hostEntry) session(v Session) Session {
	v.ID, v.Host = e.id(v.ID), e.name
	return v
}

func (e *hostEntry) request(v Request) Request {
	v.ID, v.SessionID, v.Host = e.id(v.ID), e.id(v.SessionID), e.name
	return v
}

func (e *hostEntry) prompt(v Prompt) Prompt {
	v.ID, v.SessionID, v.Host = e.id(v.ID), e.id(v.SessionID), e.name
	return v
}

func (e *hostEntry) alert(v Alert) Alert {
	v.ID, v.SessionID, v.Host = e.id(v.ID), e.id(v.SessionID), e.name
	return v
}

func (e *hostEntry) checkpoint(v Checkpoint) Checkpoint {
	v.ID, v.SessionID = e.id(v.ID), e.id(v.SessionID)
	return v
}

func (e *hostEntry) steering(v Steering) Steering {
	v.ID, v.SessionID = e.id(v.ID), e.id(v.SessionID)
	return v
}

// resumed is a host's resume: its session with this service's ID (the
// run and the supervisor are the host's).
func (e *hostEntry) resumed(v Resumed) Resumed {
	v.Session = e.session(v.Session)
	return v
}

func (e *hostEntry) post(v Post) Post {
	v.ItemID, v.SessionID = e.id(v.ItemID), e.id(v.SessionID)
	return v
}

// detailIDs are the keys of an audit line's detail that hold an ID of the
// host's (an item of a prompt_ or alert_ line, a steering message, a
// checkpoint, the sessions a steering_moved line names).
var detailIDs = []string{"prompt", "alert", "steering", "checkpoint", "from", "to"}

// event is a host's audit line with this service's IDs.
func (e *hostEntry) event(v AuditEvent) AuditEvent {
	v.SessionID, v.RequestID = e.id(v.SessionID), e.id(v.RequestID)
	if len(v.Detail) == 0 {
		return v
	}
	var d map[string]any
	if json.Unmarshal(v.Detail, &d) != nil {
		return v
	}
	changed := false
	for _, k := range detailIDs {
		if f, ok := d[k].(float64); ok && f == float64(int64(f)) && f > 0 {
			d[k], changed = e.id(int64(f)), true
		}
	}
	if changed {
		if b, err := json.Marshal(d); err == nil {
			v.Detail = b
		}
	}
	return v
}

// err is a host's error with this service's IDs: the item a lost answer
// names, the checkpoint of a refused restore, the ID a not-found names.
func (e *hostEntry) err(err error) error {
	if err == nil {
		return nil
	}
	var de *DecidedError
	if errors.As(err, &de) {
		out := &DecidedError{}
		if de.Request.ID != 0 {
			out.Request = e.request(de.Request)
		}
		if de.Prompt.ID != 0 {
			out.Prompt = e.prompt(de.Prompt)
		}
		if de.Alert.ID != 0 {
			out.Alert = e.alert(de.Alert)
		}
		return out
	}
	var dv *DivergedError
	if errors.As(err, &dv) {
		return &DivergedError{Checkpoint: e.id(dv.Checkpoint), Changes: dv.Changes}
	}
	if ae := agenterr.As(err); ae != nil && ae.Field == "id" {
		if n, perr := strconv.ParseInt(ae.Value, 10, 64); perr == nil {
			c := *ae
			c.Value = strconv.FormatInt(e.id(n), 10)
			c.Reason = joinReason(c.Reason, "on host "+e.name)
			return &c
		}
	}
	return err
}

func joinReason(reason, more string) string {
	if reason == "" {
		return more
	}
	return reason + " (" + more + ")"
}

// eachHost calls fn for every host at once, each within timeout, and
// waits for them all.
func (s *Service) eachHost(ctx context.Context, fn func(ctx context.Context, e *hostEntry)) {
	var wg sync.WaitGroup
	for _, e := range s.hosts.list {
		wg.Go(func() {
			hctx, cancel := context.WithTimeout(ctx, s.hostTimeout)
			defer cancel()
			fn(hctx, e)
		})
	}
	wg.Wait()
}

// DefaultHostTimeout bounds one host's answer to a merged read: a host
// that does not answer in time is shown unreachable, the others are.
const DefaultHostTimeout = 5 * time.Second

// hostChange is a change of a host's item: this machine's check of the
// actor first (the caller check: a request from inside an agent's process
// tree is refused here, before anything is sent), then the host's own
// authorisation and compare-and-set, the answer in this service's IDs, and
// its event on this machine's bus.
func hostChange[T any](ctx context.Context, s *Service, a Actor, e *hostEntry, routeErr error, call func() (T, error), conv func(T) T, ev func(T) events.Event) (T, error) {
	var zero T
	if routeErr != nil {
		return zero, routeErr
	}
	// 0: the session is the host's, not in this machine's audit log.
	if err := s.check(ctx, a, 0, "a change of a session on another machine"); err != nil {
		return zero, err
	}
	v, err := call()
	if err != nil {
		return zero, e.err(err)
	}
	v = conv(v)
	s.publish(ev(v))
	return v, nil
}
