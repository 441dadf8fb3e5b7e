package slack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/supervision"
)

// One process posts. Two `agentinfra slack` on one workspace would both
// post every message; the store's lease (surface_leases) lets one of them
// connect and post, renewed while it runs; another waits, says so, and
// takes over when the lease is released (the first stopped) or expired (it
// died).

// DefaultLease is how long the lease lasts unless renewed (every third of
// it).
const DefaultLease = 30 * time.Second

// errLeaseLost: another process took the lease (this one could not renew
// it in time: a suspended laptop, a stalled disk).
var errLeaseLost = errors.New("another agentinfra slack took over posting for this workspace")

// newHolder names this process in the lease.
func newHolder() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s pid %d (%s)", host, os.Getpid(), hex.EncodeToString(b))
}

func (s *Service) leaseTTL() time.Duration {
	if s.opts.Lease > 0 {
		return s.opts.Lease
	}
	return DefaultLease
}

// awaitLease returns once this process holds the lease, saying once that it
// waits when another one has it.
func (s *Service) awaitLease(ctx context.Context) error {
	changes, err := s.sup.Changes(ctx)
	if err != nil {
		return err
	}
	said := ""
	for {
		l, held, err := s.sup.AcquireLease(ctx, supervision.SurfaceSlack, s.holder, s.leaseTTL())
		switch {
		case err != nil:
			s.log.Warn("slack: the lease", "err", err)
		case held:
			if said != "" {
				s.log.Info("slack: the other process stopped; posting from this one", "was", said)
			}
			return nil
		case l.Holder != said:
			said = l.Holder
			s.log.Warn(fmt.Sprintf("slack: another agentinfra slack (%s) posts for this workspace; waiting until it stops", l.Holder),
				"until", l.ExpiresAt.Local().Format(time.TimeOnly))
		}
		// A release is a change of the store; an expiry is not: both wake.
		wait := s.leaseTTL() / 3
		if err == nil && !held {
			wait = min(wait, time.Until(l.ExpiresAt)+10*time.Millisecond)
		}
		t := time.NewTimer(max(wait, 10*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changes:
		case <-t.C:
		}
		t.Stop()
	}
}

// keepLease renews the lease every third of its time until ctx ends; it
// returns errLeaseLost when another process has it.
func (s *Service) keepLease(ctx context.Context) error {
	tick := time.NewTicker(s.leaseTTL() / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		l, held, err := s.sup.AcquireLease(ctx, supervision.SurfaceSlack, s.holder, s.leaseTTL())
		if err != nil {
			s.log.Warn("slack: renewing the lease", "err", err) // the next tick tries again
			continue
		}
		if !held {
			return fmt.Errorf("%w (%s)", errLeaseLost, l.Holder)
		}
	}
}

// releaseLease lets another process post at once.
func (s *Service) releaseLease() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.sup.ReleaseLease(ctx, supervision.SurfaceSlack, s.holder); err != nil {
		s.log.Warn("slack: releasing the lease", "err", err)
	}
}
