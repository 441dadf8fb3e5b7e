package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/events"
)

// Changes signals (coalesced, never blocking the writer) each time another
// connection — this process's or another's — commits to the database, until
// ctx is done. It polls PRAGMA data_version on a connection of its own every
// Options.PollInterval: the pragma reads the WAL index in shared memory, so
// a poll costs microseconds and no lock.
func (s *Store) Changes(ctx context.Context) (<-chan struct{}, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.path, err)
	}
	version := func() (int64, error) {
		var v int64
		err := conn.QueryRowContext(context.Background(), "PRAGMA data_version").Scan(&v)
		return v, err
	}
	last, err := version()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("watch %s: %w", s.path, err)
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer conn.Close()
		defer close(ch)
		t := time.NewTicker(s.opts.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v, err := version()
			if err != nil || v == last {
				continue
			}
			last = v
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, nil
}

// WaitDecision blocks until request id is no longer pending (decided,
// expired, withdrawn or interrupted, by any process) and returns it.
func (s *Store) WaitDecision(ctx context.Context, id int64) (r Request, err error) {
	err = s.waitSettled(ctx, func() (bool, error) {
		var err error
		r, err = s.Request(ctx, id)
		return r.Status != StatusPending, err
	})
	return r, err
}

// PublishChanges publishes an events.SupervisionChanged on bus (with Root
// root, Source "watch") each time the database changes (Changes), until ctx
// is done: how the changes of every process reach a process's bus (the web
// console's live pages).
func (s *Store) PublishChanges(ctx context.Context, bus *events.Bus, root string) error {
	changes, err := s.Changes(ctx)
	if err != nil {
		return err
	}
	go func() {
		for range changes {
			bus.Publish(events.Event{Kind: events.SupervisionChanged, Root: root, Source: "watch"})
		}
	}()
	return nil
}
