package supervision

import (
	"context"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/events"
)

// How a follower of a host waits before it follows again after a break:
// from followRetryMin, doubling up to followRetryMax while the host stays
// away.
const (
	followRetryMin = 100 * time.Millisecond
	followRetryMax = 2 * time.Second
)

// followHost follows host e's audit log from its event after (< 0: from its
// newest), through breaks, until ctx ends: fn gets each event once, in the
// host's order, with this service's IDs; a break is followed again from the
// last event fn took, so that nothing is missed (the host sends again what
// came meanwhile) and nothing is taken twice (what the host sends again
// that fn took is skipped by its number). An event fn fails on is not
// taken: it comes again after the next break. opened is called each time
// the host answers, with its newest event's number; broke each time the
// stream breaks.
func (s *Service) followHost(ctx context.Context, e *hostEntry, after int64, opened func(last int64), broke func(error), fn func(AuditEvent) error) {
	wait := followRetryMin
	for ctx.Err() == nil {
		took := false
		err := e.h.Follow(ctx, after, func(last int64) {
			if after < 0 || last < after {
				// From now; or the host's log is shorter than where this
				// was (its store was started afresh): from its newest.
				after = last
			}
			if opened != nil {
				opened(last)
			}
		}, func(ev AuditEvent) error {
			if ev.Seq <= after {
				return nil
			}
			if err := fn(e.event(ev)); err != nil {
				return err
			}
			after, took = ev.Seq, true
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		if broke != nil {
			broke(err)
		}
		if took {
			wait = followRetryMin
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, followRetryMax)
	}
}

// broadcast signals its subscribers, each signal coalesced per subscriber
// and never blocking.
type broadcast struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (b *broadcast) signal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel signalled by every signal until ctx ends.
func (b *broadcast) subscribe(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	})
	return ch
}

// watchHosts starts, once per service, a follower of every host that
// signals s.hosts.watch and publishes on the bus each time a host's state
// changes: an event of its audit log, the host reached or lost. It runs
// until the service is closed.
func (s *Service) watchHosts() *broadcast {
	s.hosts.watchOnce.Do(func() {
		s.hosts.watch = &broadcast{}
		for _, e := range s.hosts.list {
			go s.followHost(s.life, e, -1, func(int64) {
				s.hosts.watch.signal()
				s.publish(events.Event{Kind: events.SupervisionChanged, Source: "host", Text: e.name})
			}, func(error) {
				s.hosts.watch.signal()
				s.publish(events.Event{Kind: events.SupervisionChanged, Source: "host", Text: e.name})
			}, func(ev AuditEvent) error {
				s.hosts.watch.signal()
				s.publish(hostEvent(ev, e.name))
				return nil
			})
		}
	})
	return s.hosts.watch
}

// hostEvent is a host's audit line as this machine's bus carries it: the
// kind of change its action is (a request's, a session's...), Source
// "host" and the host's name in Text.
func hostEvent(ev AuditEvent, host string) events.Event {
	kind := events.SupervisionChanged
	for prefix, k := range map[string]events.Kind{"request_": events.RequestChanged, "prompt_": events.PromptChanged, "alert_": events.AlertChanged,
		"session_": events.SessionChanged, "steering_": events.SteeringChanged, "checkpoint_": events.CheckpointChanged} {
		if len(ev.Action) > len(prefix) && ev.Action[:len(prefix)] == prefix {
			kind = k
		}
	}
	return events.Event{Kind: kind, SessionID: ev.SessionID, ItemID: ev.RequestID, Actor: ev.Actor, Source: "host", Text: host + ": " + ev.Action}
}

// Changes signals each time the store changes, from any process, or a
// host's state does (an event of its audit log; it is reached or lost),
// until ctx ends (a watching inbox, a waiting prompt).
func (s *Service) Changes(ctx context.Context) (<-chan struct{}, error) {
	local, err := s.st.Changes(ctx)
	if err != nil || len(s.hosts.list) == 0 {
		return local, err
	}
	hosts := s.watchHosts().subscribe(ctx)
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-local:
				if !ok {
					return
				}
			case <-hosts:
			}
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, nil
}

// PublishChanges publishes events.SupervisionChanged on the service's bus
// each time the store changes, from any process, until ctx ends: how other
// processes' changes reach a live page. The hosts' changes are published
// too (watchHosts), as the events of their kinds.
func (s *Service) PublishChanges(ctx context.Context) error {
	if len(s.hosts.list) > 0 {
		s.watchHosts()
	}
	return s.st.PublishChanges(ctx, s.bus, s.ws.Root)
}

// FollowHosts calls fn with each audit event of every host, in each host's
// order and once each, with this service's IDs, until ctx ends: the
// hosts' part of the feed a remote surface follows (AuditAfter is this
// machine's). Where it is in each host's log is kept in this workspace's
// store, under surface@host (Cursor), once fn took an event: a restart goes
// on from there. A host followed for the first time is followed from its
// newest event, and catchUp is called then (it posts what waits already,
// as the surface does at its own first start). A host that cannot be
// reached is followed again from where it was once it can; an event fn
// fails on comes again then.
func (s *Service) FollowHosts(ctx context.Context, surface string, catchUp func(context.Context) error, fn func(context.Context, AuditEvent) error) error {
	var wg sync.WaitGroup
	for _, e := range s.hosts.list {
		key := surface + "@" + e.name
		after, ok, err := s.st.Cursor(ctx, key)
		if err != nil {
			return err
		}
		if !ok {
			after = -1
		}
		wg.Go(func() {
			s.followHost(ctx, e, after, func(last int64) {
				if ok {
					return
				}
				// The first time: from the host's newest event on, kept
				// before anything else so that a restart does not skip
				// what comes meanwhile.
				if err := s.st.SetCursor(ctx, key, last); err == nil {
					ok = true
				}
				if catchUp != nil {
					_ = catchUp(ctx)
				}
			}, nil, func(ev AuditEvent) error {
				if err := fn(ctx, ev); err != nil {
					return err
				}
				return s.st.SetCursor(ctx, key, ev.Seq)
			})
		})
	}
	wg.Wait()
	return ctx.Err()
}
