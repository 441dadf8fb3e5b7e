package watchdog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeActions records what the watchdog did and when (on the bubble's fake
// clock), like the store would: one active alert at a time.
type fakeActions struct {
	mu     sync.Mutex
	start  time.Time
	log    []string
	nextID int64
	active int64
	// closeNext makes the next action find the alert closed (a person
	// dismissed it in the meantime).
	closeNext bool
}

func (f *fakeActions) add(format string, a ...any) {
	f.log = append(f.log, fmt.Sprintf("%s %s", time.Since(f.start).Round(time.Second), fmt.Sprintf(format, a...)))
}

func (f *fakeActions) Raise(_ context.Context, silent time.Duration) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active != 0 {
		return 0, fmt.Errorf("a second active alert while a%d is active", f.active)
	}
	f.nextID++
	f.active = f.nextID
	f.add("raise a%d after %v", f.nextID, silent.Round(time.Second))
	return f.nextID, nil
}

func (f *fakeActions) closed() bool {
	if f.closeNext {
		f.closeNext = false
		f.active = 0
		return true
	}
	return false
}

func (f *fakeActions) Nudge(_ context.Context, id int64, n int, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed() {
		f.add("nudge a%d refused: closed", id)
		return ErrAlertClosed
	}
	f.add("nudge a%d #%d", id, n)
	return nil
}

func (f *fakeActions) Escalate(_ context.Context, id int64, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.active = 0
	f.add("escalate a%d after %d nudges", id, n)
	return nil
}

func (f *fakeActions) Recover(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.active = 0
	f.add("recover a%d", id)
	return nil
}

func (f *fakeActions) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n")
}

// run starts a watchdog in the bubble; the returned stop ends it.
func run(t *testing.T, cfg Config) (*Watchdog, *fakeActions, func()) {
	t.Helper()
	f := &fakeActions{start: time.Now()}
	w := New(cfg, f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return w, f, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func want(t *testing.T, f *fakeActions, lines ...string) {
	t.Helper()
	synctest.Wait()
	if got := f.got(); got != strings.Join(lines, "\n") {
		t.Fatalf("the watchdog did:\n%s\nwant:\n%s", got, strings.Join(lines, "\n"))
	}
}

// Silence: nothing before the threshold; an alert at it; a nudge every
// escalation wait, max_retries of them; then the escalation, and nothing
// more until the agent speaks.
func TestThresholdNudgesThenEscalates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, f, stop := run(t, Config{})
		defer stop()
		time.Sleep(299 * time.Second)
		want(t, f)
		time.Sleep(time.Second)
		want(t, f, "5m0s raise a1 after 5m0s")
		time.Sleep(3*120*time.Second + 120*time.Second)
		want(t, f, "5m0s raise a1 after 5m0s", "7m0s nudge a1 #1", "9m0s nudge a1 #2", "11m0s nudge a1 #3", "13m0s escalate a1 after 3 nudges")
		time.Sleep(24 * time.Hour) // escalated: people look; the watchdog waits
		want(t, f, "5m0s raise a1 after 5m0s", "7m0s nudge a1 #1", "9m0s nudge a1 #2", "11m0s nudge a1 #3", "13m0s escalate a1 after 3 nudges")
	})
}

// The configured threshold, escalation wait and retries apply.
func TestConfiguredTimings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, f, stop := run(t, Config{Threshold: 10 * time.Second, EscalationWait: 5 * time.Second, MaxRetries: 1})
		defer stop()
		time.Sleep(time.Minute)
		want(t, f, "10s raise a1 after 10s", "15s nudge a1 #1", "20s escalate a1 after 1 nudges")
	})
}

// A pending approval and a silently running tool pause the clock: the
// silence before the hold counts, the hold does not.
func TestClockPausesDuringApprovalAndSilentTool(t *testing.T) {
	for _, why := range []string{"approval request 12", "tool Bash running"} {
		t.Run(why, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, f, stop := run(t, Config{})
				defer stop()
				time.Sleep(200 * time.Second)
				release := w.Hold(why)
				time.Sleep(2 * time.Hour) // a person takes their time
				want(t, f)
				if st := w.State(); len(st.Held) != 1 || st.Held[0] != why || st.Silent != 200*time.Second {
					t.Fatalf("held state: %+v", st)
				}
				release()
				release() // idempotent
				time.Sleep(99 * time.Second)
				want(t, f)
				time.Sleep(time.Second)
				want(t, f, "2h5m0s raise a1 after 5m0s")
				// Holding while alerted pauses the escalation clock too.
				time.Sleep(60 * time.Second)
				release = w.Hold(why)
				time.Sleep(time.Hour)
				release()
				time.Sleep(60 * time.Second)
				want(t, f, "2h5m0s raise a1 after 5m0s", "3h7m0s nudge a1 #1")
			})
		})
	}
}

// Holds nest: the clock runs only when the last is released.
func TestHoldsNest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f, stop := run(t, Config{Threshold: 10 * time.Second})
		defer stop()
		a := w.Hold("approval")
		b := w.Hold("paused by @ana")
		a()
		time.Sleep(time.Hour)
		want(t, f)
		b()
		time.Sleep(10 * time.Second)
		want(t, f, "1h0m10s raise a1 after 10s")
	})
}

// Any activity closes the alert as self-recovered (whether only raised or
// already nudged); the next alert needs a whole threshold of new silence.
func TestActivitySelfRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f, stop := run(t, Config{})
		defer stop()
		time.Sleep(150 * time.Second)
		w.Activity() // before the threshold: the silence starts over
		time.Sleep(299 * time.Second)
		want(t, f)
		time.Sleep(time.Second)
		time.Sleep(130 * time.Second)
		w.Activity()
		want(t, f, "7m30s raise a1 after 5m0s", "9m30s nudge a1 #1", "9m40s recover a1")
		if st := w.State(); st.Stage != Watching || st.AlertID != 0 || st.Nudges != 0 {
			t.Fatalf("after recovery: %+v", st)
		}
		time.Sleep(300 * time.Second)
		want(t, f, "7m30s raise a1 after 5m0s", "9m30s nudge a1 #1", "9m40s recover a1", "14m40s raise a2 after 5m0s")
		w.Activity()
		want(t, f, "7m30s raise a1 after 5m0s", "9m30s nudge a1 #1", "9m40s recover a1", "14m40s raise a2 after 5m0s", "14m40s recover a2")
	})
}

// One alert per session: however long the silence, the watchdog never
// raises a second alert while one is active (fakeActions refuses it, like
// the store's unique index); an escalated alert waits for activity.
func TestOneAlertAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f, stop := run(t, Config{Threshold: time.Second, EscalationWait: time.Second, MaxRetries: 2})
		defer stop()
		time.Sleep(48 * time.Hour)
		want(t, f, "1s raise a1 after 1s", "2s nudge a1 #1", "3s nudge a1 #2", "4s escalate a1 after 2 nudges")
		w.Activity()
		time.Sleep(time.Second)
		want(t, f, "1s raise a1 after 1s", "2s nudge a1 #1", "3s nudge a1 #2", "4s escalate a1 after 2 nudges",
			"48h0m0s recover a1", "48h0m1s raise a2 after 1s")
	})
}

// A person dismissed the alert: the watchdog's next action finds it closed
// and the watch starts over with a new threshold; so does Closed (the
// supervisor saw the dismissal in the store).
func TestAPersonClosesTheAlert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f, stop := run(t, Config{Threshold: 10 * time.Second, EscalationWait: 5 * time.Second})
		defer stop()
		time.Sleep(10 * time.Second)
		f.mu.Lock()
		f.closeNext = true
		f.mu.Unlock()
		time.Sleep(5 * time.Second)
		want(t, f, "10s raise a1 after 10s", "15s nudge a1 refused: closed")
		time.Sleep(10 * time.Second)
		want(t, f, "10s raise a1 after 10s", "15s nudge a1 refused: closed", "25s raise a2 after 10s")
		f.mu.Lock()
		f.active = 0
		f.mu.Unlock()
		w.Closed(2)
		time.Sleep(10 * time.Second)
		want(t, f, "10s raise a1 after 10s", "15s nudge a1 refused: closed", "25s raise a2 after 10s", "35s raise a3 after 10s")
	})
}
