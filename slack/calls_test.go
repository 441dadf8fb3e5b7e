package slack

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// A caller that stops waiting while its call is under way gets what the
// call did: a message that reached Slack is reported posted (with its ts),
// not failed — else the caller's retry posts it twice (the CI's data race
// on post's ts was this).
func TestACallUnderWayIsWaitedForWhenItsCallerGivesUp(t *testing.T) {
	c := newCalls(4)
	lanes, stop := context.WithCancel(context.Background())
	defer stop()
	c.start(lanes)
	ctx, giveUp := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	var ts string
	res := make(chan error, 1)
	go func() {
		res <- c.do(ctx, "chat.postMessage", func(context.Context) error {
			close(started)
			<-release // the request is on the wire
			ts = "1700000000.000001"
			return nil
		})
	}()
	<-started
	giveUp()
	close(release)
	if err := <-res; err != nil || ts != "1700000000.000001" {
		t.Fatalf("do = %v, ts %q: want the call's own result, the message posted", err, ts)
	}
}

// A call whose caller gave up before its turn came is never made: nobody
// would know it was.
func TestACallGivenUpBeforeItsTurnIsNeverMade(t *testing.T) {
	c := newCalls(4)
	lanes, stop := context.WithCancel(context.Background())
	defer stop()
	c.start(lanes)
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- c.do(context.Background(), "chat.postMessage", func(context.Context) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started // the lane is busy: the next call waits its turn
	ctx, giveUp := context.WithCancel(context.Background())
	var made atomic.Bool
	second := make(chan error, 1)
	go func() {
		second <- c.do(ctx, "chat.postMessage", func(context.Context) error { made.Store(true); return nil })
	}()
	poll.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.lanes["chat.postMessage"]) == 1
	}, "the second call is not queued")
	giveUp()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("the call given up returned %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// A third call runs after the place the second held in the lane.
	if err := c.do(context.Background(), "chat.postMessage", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if made.Load() {
		t.Error("the call given up before its turn was made")
	}
}
