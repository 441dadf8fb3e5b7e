package slack

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
)

// DefaultQueue bounds the calls waiting for Slack.
const DefaultQueue = 256

// maxRateRetries bounds how many 429s one call may meet.
const maxRateRetries = 5

// outbox sends every Web API call, one at a time, through a bounded queue.
// A 429 pauses the queue for its Retry-After and the call is tried again:
// the calls behind it wait their turn instead of meeting the same limit.
// A full queue makes callers wait (back-pressure) until their context
// ends.
type outbox struct {
	jobs    chan *job
	limited atomic.Int64 // 429s met
	sleep   func(context.Context, time.Duration) error
}

type job struct {
	name string
	fn   func(context.Context) error
	ctx  context.Context
	done chan error
}

func newOutbox(size int) *outbox {
	if size <= 0 {
		size = DefaultQueue
	}
	return &outbox{jobs: make(chan *job, size), sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run works the queue until ctx ends.
func (o *outbox) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-o.jobs:
			j.done <- o.work(ctx, j)
		}
	}
}

func (o *outbox) work(ctx context.Context, j *job) error {
	for attempt := 0; ; attempt++ {
		if err := j.ctx.Err(); err != nil {
			return err
		}
		err := j.fn(j.ctx)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) {
			return err
		}
		o.limited.Add(1)
		if attempt >= maxRateRetries {
			return fmt.Errorf("%s: still rate limited by Slack after %d tries: %w", j.name, attempt+1, err)
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		if err := o.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// do runs fn through the queue and returns its error.
func (o *outbox) do(ctx context.Context, name string, fn func(context.Context) error) error {
	j := &job{name: name, fn: fn, ctx: ctx, done: make(chan error, 1)}
	select {
	case o.jobs <- j:
	case <-ctx.Done():
		return fmt.Errorf("%s: the queue to Slack is full: %w", name, ctx.Err())
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
