// Package watchdog notices a supervised agent that went quiet and tries to
// get it moving: after Threshold of silence on the CLI's own event stream
// it raises a stall alert; after each EscalationWait of further silence it
// nudges the agent (a message through the bridge), up to MaxRetries times;
// then it escalates (the remote surfaces mention the owner). Any activity
// closes the alert as self-recovered. The clock pauses while something
// explains the silence: an approval request waits for a person, a tool runs
// without printing (claude and gemini print nothing while a shell command
// runs), the turn is over and a continuation prompt waits, or a person
// paused the watchdog (a long build).
//
// The watchdog only decides when; Actions does (the store's alert, the
// bridge's Send, the events bus). A person may act on the alert meanwhile
// (dismiss it, nudge it): an action that finds the alert closed
// (ErrAlertClosed) starts the watch over. One alert at a time per
// watchdog, and the store holds one active alert per session.
package watchdog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultThreshold      = 300 * time.Second
	DefaultEscalationWait = 120 * time.Second
	DefaultMaxRetries     = 3
	DefaultNudge          = "You have been quiet for a while. If you are stuck, say what blocks you; otherwise continue with the task."
)

// Config tunes a watchdog (zero values take the defaults).
type Config struct {
	Threshold      time.Duration
	EscalationWait time.Duration
	// MaxRetries is the number of nudges before escalating (negative: none,
	// escalate at once after the first EscalationWait).
	MaxRetries int
	// Nudge is the message sent to the agent.
	Nudge string
}

func (c Config) withDefaults() Config {
	if c.Threshold <= 0 {
		c.Threshold = DefaultThreshold
	}
	if c.EscalationWait <= 0 {
		c.EscalationWait = DefaultEscalationWait
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.Nudge == "" {
		c.Nudge = DefaultNudge
	}
	return c
}

// ErrAlertClosed is what an action returns when the alert is no longer
// active (a person dismissed it, the session ended): the watch starts over.
var ErrAlertClosed = errors.New("the stall alert is no longer active")

// Actions carry out the watchdog's decisions.
type Actions interface {
	// Raise records a stall alert and returns its ID.
	Raise(ctx context.Context, silent time.Duration) (alertID int64, err error)
	// Nudge sends the agent text (the n-th nudge of the alert).
	Nudge(ctx context.Context, alertID int64, n int, text string) error
	// Escalate marks the alert escalated: people must look.
	Escalate(ctx context.Context, alertID int64, nudges int) error
	// Recover closes the alert: the agent spoke again.
	Recover(ctx context.Context, alertID int64) error
}

// Stage is where a watchdog is.
type Stage string

// Stages.
const (
	Watching  Stage = "watching"  // no alert
	Alerted   Stage = "alerted"   // alert raised, no nudge yet
	Nudged    Stage = "nudged"    // nudged at least once
	Escalated Stage = "escalated" // nudges spent: waits for activity or a person
)

// State is a snapshot for tests and status displays.
type State struct {
	Stage   Stage
	AlertID int64
	Nudges  int
	// Held lists why the clock is paused ("" none).
	Held []string
	// Silent is the silence counted so far (paused time excluded).
	Silent time.Duration
}

// Watchdog watches one session. Its methods are safe for concurrent use.
type Watchdog struct {
	cfg Config
	act Actions

	mu      sync.Mutex
	stage   Stage
	alertID int64
	nudges  int
	// silence so far: banked (before the last hold) + since the clock ran.
	banked  time.Duration
	since   time.Time // zero while held
	holds   map[int]string
	nextH   int
	recover bool // activity came while an alert was active
	restart bool // an action found the alert closed
	poke    chan struct{}
}

// New makes a watchdog; Run runs it.
func New(cfg Config, act Actions) *Watchdog {
	return &Watchdog{cfg: cfg.withDefaults(), act: act, stage: Watching, since: time.Now(),
		holds: map[int]string{}, poke: make(chan struct{}, 1)}
}

// Config is the configuration in force (defaults applied).
func (w *Watchdog) Config() Config { return w.cfg }

func (w *Watchdog) wake() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// Activity is any event of the agent: the silence starts over, and an
// active alert closes as self-recovered.
func (w *Watchdog) Activity() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.banked = 0
	if len(w.holds) == 0 {
		w.since = time.Now()
	}
	if w.stage != Watching {
		w.recover = true
	}
	w.wake()
}

// Hold pauses the clock until release is called (idempotent): an approval
// request waits, a tool runs silently, a prompt waits for a person, a
// person paused the watchdog. Holds nest.
func (w *Watchdog) Hold(why string) (release func()) {
	w.mu.Lock()
	if len(w.holds) == 0 && !w.since.IsZero() {
		w.banked += time.Since(w.since)
		w.since = time.Time{}
	}
	w.nextH++
	id := w.nextH
	w.holds[id] = why
	w.mu.Unlock()
	w.wake()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.holds, id)
			if len(w.holds) == 0 {
				w.since = time.Now()
			}
			w.mu.Unlock()
			w.wake()
		})
	}
}

// Closed tells the watchdog that a person closed alert id (dismissed it,
// paused the watchdog): the watch starts over.
func (w *Watchdog) Closed(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id != 0 && id == w.alertID {
		w.restart = true
		w.wake()
	}
}

// State is a snapshot.
func (w *Watchdog) State() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := State{Stage: w.stage, AlertID: w.alertID, Nudges: w.nudges, Silent: w.silentLocked()}
	for _, h := range w.holds {
		st.Held = append(st.Held, h)
	}
	return st
}

func (w *Watchdog) silentLocked() time.Duration {
	d := w.banked
	if !w.since.IsZero() {
		d += time.Since(w.since)
	}
	return d
}

// needLocked is the silence the current stage waits for before its next
// step (0: nothing to wait for).
func (w *Watchdog) needLocked() time.Duration {
	switch w.stage {
	case Watching:
		return w.cfg.Threshold
	case Alerted, Nudged:
		return w.cfg.EscalationWait
	}
	return 0
}

// Run watches until ctx ends. An error of Actions other than
// ErrAlertClosed is returned (the store is gone: nothing can be recorded).
func (w *Watchdog) Run(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		step := w.nextStepLocked()
		var wait time.Duration
		if step == nil {
			if need := w.needLocked(); need > 0 && len(w.holds) == 0 {
				wait = need - w.silentLocked()
			}
		}
		w.mu.Unlock()
		if step != nil {
			if err := step(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		var tc <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.poke:
		case <-tc:
		}
		if tc != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// nextStepLocked is the action due now, or nil.
func (w *Watchdog) nextStepLocked() func(context.Context) error {
	if w.restart {
		w.restart = false
		w.reset()
	}
	if w.recover {
		w.recover = false
		id := w.alertID
		w.reset()
		return func(ctx context.Context) error { return closed(w.act.Recover(ctx, id)) }
	}
	if len(w.holds) > 0 {
		return nil
	}
	need := w.needLocked()
	if need == 0 || w.silentLocked() < need {
		return nil
	}
	silent := w.silentLocked()
	// Each step counts its wait from now.
	w.banked, w.since = 0, time.Now()
	switch w.stage {
	case Watching:
		w.stage = Alerted
		return func(ctx context.Context) error {
			id, err := w.act.Raise(ctx, silent)
			w.mu.Lock()
			defer w.mu.Unlock()
			if err != nil {
				w.stage = Watching
				return w.closedLocked(err)
			}
			// Activity during the raise finds this ID and closes the alert.
			w.alertID = id
			return nil
		}
	default:
		id, n := w.alertID, w.nudges
		if n >= w.cfg.MaxRetries {
			w.stage = Escalated
			return func(ctx context.Context) error { return w.afterAction(w.act.Escalate(ctx, id, n)) }
		}
		w.stage, w.nudges = Nudged, n+1
		return func(ctx context.Context) error { return w.afterAction(w.act.Nudge(ctx, id, n+1, w.cfg.Nudge)) }
	}
}

func (w *Watchdog) afterAction(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closedLocked(err)
}

// closedLocked turns ErrAlertClosed into a fresh watch.
func (w *Watchdog) closedLocked(err error) error {
	if errors.Is(err, ErrAlertClosed) {
		w.restart = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return nil
}

func closed(err error) error {
	if errors.Is(err, ErrAlertClosed) {
		return nil
	}
	return err
}

// reset is a fresh watch: no alert, the silence counted from now.
func (w *Watchdog) reset() {
	w.stage, w.alertID, w.nudges = Watching, 0, 0
	w.banked = 0
	if len(w.holds) == 0 {
		w.since = time.Now()
	} else {
		w.since = time.Time{}
	}
}
