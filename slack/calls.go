package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
)

// DefaultQueue bounds the calls of one Web API method waiting for Slack.
const DefaultQueue = 256

// calls sends every Web API call through the lane of its method: one call
// at a time per method, in the order they came, through a bounded queue (a
// full one makes callers wait until their context ends). Slack limits
// each method on its own: a 429's Retry-After pauses that method's lane
// and the call is tried again, as long as it takes; the calls behind it
// wait their turn instead of meeting the same limit, and the other
// methods' lanes go on (a limit on ephemerals does not hold a decision's
// update).
type calls struct {
	size    int
	limited atomic.Int64 // 429s met
	sleep   func(context.Context, time.Duration) error

	mu    sync.Mutex
	ctx   context.Context // the lanes' life; nil before start
	lanes map[string]chan *job
}

type job struct {
	name string
	fn   func(context.Context) error
	ctx  context.Context
	done chan error
	// state is queued until a worker takes the job or its caller gives
	// up waiting for its turn, whichever comes first (a compare-and-set):
	// a job given up is never run, and a job taken is waited for, so its
	// caller knows what reached Slack (a message posted is not posted
	// again as if it had failed).
	state atomic.Int32
}

const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

func newCalls(size int) *calls {
	if size <= 0 {
		size = DefaultQueue
	}
	return &calls{size: size, sleep: sleepCtx, lanes: map[string]chan *job{}}
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

// start lets the lanes work until ctx ends.
func (c *calls) start(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
}

// lane is the queue of a method, its worker started on first use.
func (c *calls) lane(name string) (chan *job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, fmt.Errorf("%s: the Slack service is not running", name)
	}
	l, ok := c.lanes[name]
	if !ok {
		l = make(chan *job, c.size)
		c.lanes[name] = l
		go c.run(c.ctx, l)
	}
	return l, nil
}

// run works a lane until ctx ends.
func (c *calls) run(ctx context.Context, l chan *job) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-l:
			if !j.state.CompareAndSwap(jobQueued, jobTaken) {
				continue // its caller gave up waiting for its turn
			}
			j.done <- c.work(ctx, j)
		}
	}
}

func (c *calls) work(ctx context.Context, j *job) error {
	for {
		if err := j.ctx.Err(); err != nil {
			return err
		}
		err := j.fn(j.ctx)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) {
			return err
		}
		c.limited.Add(1)
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		// The pause ends early when the lanes stop or the caller gives
		// up (the next call then meets the limit and waits in turn).
		sctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(j.ctx, cancel)
		err = c.sleep(sctx, wait)
		stop()
		cancel()
		if err != nil {
			if jerr := j.ctx.Err(); jerr != nil {
				return jerr
			}
			return err
		}
	}
}

// do runs fn in the lane of name and returns its error.
func (c *calls) do(ctx context.Context, name string, fn func(context.Context) error) error {
	l, err := c.lane(name)
	if err != nil {
		return err
	}
	j := &job{name: name, fn: fn, ctx: ctx, done: make(chan error, 1)}
	select {
	case l <- j:
	case <-ctx.Done():
		return fmt.Errorf("%s: the queue to Slack is full: %w", name, ctx.Err())
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return ctx.Err()
		}
		// Under way: fn ends with ctx, and what it did is the answer.
		return <-j.done
	}
}
