package slack

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/supervision"
)

// The outbox: nothing the service has to post is lost. The tail moves each
// audit event a kind posts about into the store's outbox with the cursor
// (one transaction); deliver posts them, oldest first and each session's in
// order, and forgets an event only once its messages are posted. What Slack
// refuses stays in the store and is tried again (after Options.Backoff,
// doubling up to maxRetryWait); a rate limit is waited out in the call's
// lane, however many 429s come. After a restart the outbox is where it
// was: what was not posted is posted, what was is not posted again.

// maxRetryWait bounds the wait before trying a refused message again.
const maxRetryWait = 5 * time.Minute

// auditBatch is how many audit events the tail reads at a time.
const auditBatch = 200

// tail follows the audit log from the service's cursor into the outbox. It
// stops once ctx ends; work carries a first start's catch-up once begun, so
// that what it posted is followed from its cursor after a restart.
func (s *Service) tail(ctx, work context.Context) error {
	cursor, ok, err := s.sup.Cursor(ctx, supervision.SurfaceSlack)
	if err != nil {
		return err
	}
	changes, err := s.sup.Changes(ctx)
	if err != nil {
		return err
	}
	if !ok {
		// First start: history is not replayed; live sessions and what
		// waits in them are caught up (until it all is).
		if cursor, err = s.sup.LastAuditSeq(ctx); err != nil {
			return err
		}
		// The catch-up's calls and its cursor go on work: a stop in the
		// middle would leave messages posted and no cursor, and the next
		// start, a first start again, would follow from a later one (what
		// was decided in between would stay unsaid on Slack).
		catchUp := func(context.Context) error { return s.catchUp(work) }
		if err := s.retry(ctx, "catching up the live sessions", catchUp); err != nil {
			return err
		}
		if err := s.sup.EnqueueOutbox(work, supervision.SurfaceSlack, nil, cursor); err != nil {
			return err
		}
	}
	for {
		evs, err := s.sup.AuditAfter(ctx, cursor, auditBatch)
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			var items []supervision.OutboxItem
			for _, ev := range evs {
				if ev.SessionID != 0 && s.kindOf(ev.Action) != nil {
					items = append(items, supervision.OutboxItem{Seq: ev.Seq, SessionID: ev.SessionID})
				}
			}
			last := evs[len(evs)-1].Seq
			if err := s.sup.EnqueueOutbox(ctx, supervision.SurfaceSlack, items, last); err != nil {
				return err
			}
			cursor = last
			if len(items) > 0 {
				s.wakeDeliver()
			}
		}
		if len(evs) == auditBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changes:
		}
	}
}

// retry runs fn until it succeeds or ctx ends, waiting between tries as the
// outbox does.
func (s *Service) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil // done, even if ctx ended meanwhile: the caller records it
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := s.retryWait(attempt)
		s.log.Warn("slack: "+what+"; trying again", "err", err, "in", wait)
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
}

// retryWait is the wait after the attempt-th failure.
func (s *Service) retryWait(attempt int) time.Duration {
	wait := s.opts.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	for range attempt {
		wait *= 2
		if wait >= maxRetryWait {
			return maxRetryWait
		}
	}
	return wait
}

func (s *Service) wakeDeliver() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// deliver posts the outbox's items until ctx ends; work carries the calls
// of the item in hand (it outlives ctx a little, so that a message sent is
// also recorded).
func (s *Service) deliver(ctx, work context.Context) error {
	for {
		heads, err := s.sup.OutboxHeads(work, supervision.SurfaceSlack)
		if err != nil {
			return err
		}
		var next time.Time
		progressed := false
		for _, it := range heads {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if now := time.Now(); it.NextAt.After(now) {
				if next.IsZero() || it.NextAt.Before(next) {
					next = it.NextAt
				}
				continue
			}
			if err := s.route(work, &delivery{s: s, item: it}, it.Event); err != nil {
				if work.Err() != nil {
					return work.Err()
				}
				wait := s.retryWait(it.Attempts)
				s.log.Warn("slack: not posted; kept to try again", "action", it.Event.Action, "session", it.SessionID, "audit_seq", it.Seq,
					"attempts", it.Attempts+1, "in", wait, "err", err)
				if err := s.sup.OutboxRetry(work, supervision.SurfaceSlack, it.Seq, time.Now().Add(wait), clip(err.Error(), 500)); err != nil {
					return err
				}
				if at := time.Now().Add(wait); next.IsZero() || at.Before(next) {
					next = at
				}
				continue
			}
			if err := s.sup.OutboxDone(work, supervision.SurfaceSlack, it.Seq); err != nil {
				return err
			}
			progressed = true
		}
		if progressed {
			continue // the sessions' next items are heads now
		}
		if err := s.idle(ctx, next); err != nil {
			return err
		}
	}
}

// idle waits for the tail to bring something, or until next (zero: no
// retry is due), or ctx's end.
func (s *Service) idle(ctx context.Context, next time.Time) error {
	var due <-chan time.Time
	if !next.IsZero() {
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		due = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.wake:
	case <-due:
	}
	return nil
}

// delivery is the outbox item whose messages are being posted: once
// remembers the parts already posted, so that a retry posts only the rest.
type delivery struct {
	s    *Service
	item supervision.OutboxItem
}

// once runs fn unless step was done for this item, and records it done.
// Outside the outbox (the first start's catch-up), d is nil: fn runs.
func (d *delivery) once(ctx context.Context, step string, fn func() error) error {
	if d == nil {
		return fn()
	}
	if d.item.Has(step) {
		return nil
	}
	if err := fn(); err != nil {
		return err
	}
	d.item.Steps = append(d.item.Steps, step)
	return d.s.sup.OutboxStep(ctx, supervision.SurfaceSlack, d.item.Seq, step)
}
