// Package events is agentinfra's in-process event bus: the services publish
// what changed (a task, an agent, a run and every event its agent CLI
// prints), and whoever shows or reacts to changes subscribes — the MCP
// server's resource subscriptions, `agent list --watch`, `agent logs
// --follow`, and later the approval inbox, the web console and Slack.
//
// One bus per process (Default). A change made by another process (a
// detached supervisor, another CLI command, a person's editor) reaches a
// process's bus through a watcher of the files it changes (task.WatchMatrix,
// fleet.Watch, agentrun's log follower), so a subscriber sees both.
//
// Publishing never blocks and costs one atomic load when nobody listens.
// Each subscriber has a bounded buffer: a subscriber that falls behind by
// more than its buffer loses the newest events and then receives one
// KindLagged event saying how many it lost (Event.Dropped), so it knows to
// re-read what it shows. A subscriber that never reads only ever holds its
// buffer. Subscriptions filter on kinds, workspace, task, agent and run
// before anything is queued.
//
// The package imports nothing of agentinfra: events carry names and IDs,
// not the services' types.
package events

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what an event is about.
type Kind string

// The kinds of events.
const (
	// TaskChanged: a task's row or folder changed (TaskID; Before/After
	// status when the status changed; Fields names what changed). Actor is
	// who changed it ("" when a watcher saw a file change it cannot
	// attribute: a person's editor, another tool).
	TaskChanged Kind = "task.changed"
	// MatrixChanged: the matrix file changed (any byte, rows or prose).
	MatrixChanged Kind = "matrix.changed"
	// SupervisionChanged: the supervision store changed (a session, an
	// approval request, a decision; any process), as store.PublishChanges
	// sees it; subscribers re-read what they show.
	SupervisionChanged Kind = "supervision.changed"
	// AgentCreated / AgentDeleted: a fleet agent appeared or went (Agent).
	AgentCreated Kind = "agent.created"
	AgentDeleted Kind = "agent.deleted"
	// AgentChanged: an agent's record changed (its status may have).
	AgentChanged Kind = "agent.changed"
	// RunStarted / RunEnded: an agent run began or ended (RunID, Agent,
	// TaskID; RunEnded's Text is the outcome and reason).
	RunStarted Kind = "run.started"
	RunEnded   Kind = "run.ended"
	// RunEvent: one event the agent CLI printed during a run (RunID; Run
	// holds it: message, tool_use, tool_result, error, ...).
	RunEvent Kind = "run.event"
	// Supervision: each change package supervision's service makes (from
	// any surface: the terminal, the web console, Slack) and those the
	// supervisor makes in the run's process, for the console's live pages.
	// SessionID names the session, ItemID the request, alert, prompt,
	// steering message or checkpoint, Status its new status (a request's
	// approved, rejected…; an alert's pending, nudged, escalated…; a
	// prompt's pending, continued, refined…; a session's), Text the reason
	// or the message, Actor who made it.
	RequestChanged    Kind = "supervision.request"
	SessionChanged    Kind = "supervision.session"
	AlertChanged      Kind = "supervision.alert"
	PromptChanged     Kind = "supervision.prompt"
	SteeringChanged   Kind = "supervision.steering"
	CheckpointChanged Kind = "supervision.checkpoint"
	// ChangeReviewed: a task's change moved in its review (package
	// review, from any surface or the fleet's run end): TaskID, Agent (the
	// change's), Status what happened — recorded, checked, verdict,
	// changes_requested, delivered, landed, conflict — Text says more (the
	// checks' state, the verdict, the files), Actor who did it.
	ChangeReviewed Kind = "review.change"
	// SessionsPurged: retention deleted old sessions (Text counts them).
	SessionsPurged Kind = "supervision.purged"
	// Lagged: this subscriber fell behind and lost Dropped events; it
	// should re-read the state it shows.
	Lagged Kind = "lagged"
)

// Event is one change.
type Event struct {
	// Seq orders the events of one bus (1, 2, ...); assigned by Publish.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	// Root is the workspace the change is in (its absolute root).
	Root string `json:"root,omitempty"`
	// Actor is who made the change: an agent ("@papi"), a person, "policy",
	// "watchdog", "agentinfra"; "" when unknown.
	Actor  string `json:"actor,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Agent  string `json:"agent,omitempty"`
	RunID  string `json:"run_id,omitempty"`
	// Before and After are a task's status around a status change.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Fields names what changed (a task's fields; "readme").
	Fields []string `json:"fields,omitempty"`
	// Text says more (a run's outcome, a reason).
	Text string `json:"text,omitempty"`
	// SessionID, ItemID and Status: see the supervision kinds.
	SessionID int64  `json:"session_id,omitempty"`
	ItemID    int64  `json:"item_id,omitempty"`
	Status    string `json:"status,omitempty"`
	// Run is the agent CLI's event of a RunEvent.
	Run *RunItem `json:"run,omitempty"`
	// Source is where the event was seen: "" in the process that made the
	// change, "watch" when a file watcher saw another process's change.
	Source string `json:"source,omitempty"`
	// Dropped counts the events a Lagged subscriber lost.
	Dropped uint64 `json:"dropped,omitempty"`
}

// RunItem is one event of an agent CLI's output, as a run's log keeps it.
type RunItem struct {
	// Seq numbers the events of one run from 1.
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"` // init, message, tool_use, tool_result, error, warning, result, run_started, run_ended
	Tool      string    `json:"tool,omitempty"`
	Text      string    `json:"text,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
}

// Filter selects events; zero fields match everything.
type Filter struct {
	Kinds  []Kind
	Root   string
	TaskID string
	Agent  string
	RunID  string
}

// Match reports whether e passes f. Lagged events always pass.
func (f Filter) Match(e Event) bool {
	if e.Kind == Lagged {
		return true
	}
	switch {
	case len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind),
		f.Root != "" && e.Root != f.Root,
		f.TaskID != "" && e.TaskID != f.TaskID,
		f.Agent != "" && e.Agent != f.Agent,
		f.RunID != "" && e.RunID != f.RunID:
		return false
	}
	return true
}

// DefaultBuffer is a subscription's buffer when Subscribe is given 0.
const DefaultBuffer = 256

// Bus delivers events to subscribers. The zero value is not usable: New.
type Bus struct {
	seq   atomic.Uint64
	mu    sync.Mutex                      // guards changes of subs
	subs  atomic.Pointer[[]*Subscription] // copy-on-write: Publish reads it without mu
	pubMu sync.Mutex                      // one publish at a time: every queue is in Seq order
	now   func() time.Time
}

// New returns an empty bus.
func New() *Bus {
	b := &Bus{now: time.Now}
	b.subs.Store(&[]*Subscription{})
	return b
}

var defaultBus = New()

// Default is the process's bus: the services publish on it.
func Default() *Bus { return defaultBus }

// Publish numbers e and hands it to every subscriber whose filter it
// passes; it never blocks (see the package comment for a full buffer).
func (b *Bus) Publish(e Event) {
	subs := *b.subs.Load()
	if len(subs) == 0 {
		return
	}
	b.pubMu.Lock()
	defer b.pubMu.Unlock()
	e.Seq = b.seq.Add(1)
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	for _, s := range subs {
		if s.filter.Match(e) {
			s.push(e)
		}
	}
}

// Subscribers counts the open subscriptions.
func (b *Bus) Subscribers() int { return len(*b.subs.Load()) }

// Subscribe starts a subscription of the events f matches, buffering up to
// buffer of them (0 = DefaultBuffer). Close it when done.
func (b *Bus) Subscribe(f Filter, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &Subscription{bus: b, filter: f, max: buffer, ready: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	old := *b.subs.Load()
	next := append(slices.Clip(old), s)
	b.subs.Store(&next)
	b.mu.Unlock()
	return s
}

func (b *Bus) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.subs.Load()
	next := slices.DeleteFunc(slices.Clone(old), func(x *Subscription) bool { return x == s })
	b.subs.Store(&next)
}

// Subscription is one subscriber's queue.
type Subscription struct {
	bus    *Bus
	filter Filter
	max    int

	mu      sync.Mutex
	queue   []Event
	dropped uint64 // lost since the last Lagged was queued
	closed  bool
	ready   chan struct{} // a token when the queue may have something
	done    chan struct{}
	once    sync.Once
}

func (s *Subscription) push(e Event) {
	s.mu.Lock()
	switch {
	case s.closed:
	case len(s.queue) < s.max:
		s.queue = append(s.queue, e)
	default:
		// Full: the newest events are lost; one Lagged marker, kept after
		// the queued events, counts them.
		s.dropped++
		if last := len(s.queue) - 1; s.queue[last].Kind == Lagged {
			s.queue[last].Dropped = s.dropped
		} else {
			s.queue = append(s.queue, Event{Kind: Lagged, Seq: e.Seq, Time: e.Time, Dropped: s.dropped})
		}
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the next event, waiting until there is one; ok is false
// when ctx ends or the subscription is closed.
func (s *Subscription) Next(ctx context.Context) (Event, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			if e.Kind == Lagged {
				s.dropped = 0
			}
			s.mu.Unlock()
			return e, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-ctx.Done():
			return Event{}, false
		case <-s.done:
		case <-s.ready:
		}
	}
}

// Ready is a channel that receives when events may be waiting: for a
// select loop that then drains them with TryNext.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// TryNext returns the next queued event without waiting.
func (s *Subscription) TryNext() (Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Event{}, false
	}
	e := s.queue[0]
	s.queue[0] = Event{}
	s.queue = s.queue[1:]
	if e.Kind == Lagged {
		s.dropped = 0
	}
	return e, true
}

// Close ends the subscription: Publish stops queueing for it and a
// waiting Next returns.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.remove(s)
		s.mu.Lock()
		s.closed = true
		s.queue = nil
		s.mu.Unlock()
		close(s.done)
	})
}
