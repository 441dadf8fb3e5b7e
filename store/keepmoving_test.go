package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// One active alert per session; the watchdog's nudge and a person's
// dismissal are a compare-and-set; a person's nudge queues a steering
// message, the watchdog's own is recorded as delivered.
func TestAlertsOneActiveAndCompareAndSet(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	a, err := s.RaiseAlert(ctx, ses.ID, "silent for 5m0s")
	if err != nil || a.Status != AlertPending || !a.Active() {
		t.Fatalf("raise: %+v %v", a, err)
	}
	if again, err := s.RaiseAlert(ctx, ses.ID, "again"); !errors.Is(err, ErrPendingExists) || again.ID != a.ID {
		t.Fatalf("a second active alert: %+v %v", again, err)
	}
	a, err = s.DecideAlert(ctx, AlertDecision{ID: a.ID, Action: AlertNudge, By: ActorWatchdog, Text: "are you there?"})
	if err != nil || a.Status != AlertNudged || a.Nudges != 1 {
		t.Fatalf("watchdog nudge: %+v %v", a, err)
	}
	a, err = s.DecideAlert(ctx, AlertDecision{ID: a.ID, Action: AlertNudge, By: "bo", Surface: SurfaceSlack, Text: "run the tests again"})
	if err != nil || a.Nudges != 2 || a.DecidedBy != "bo" {
		t.Fatalf("an operator's nudge: %+v %v", a, err)
	}
	msgs, _ := s.SteeringOf(ctx, ses.ID)
	if len(msgs) != 2 || msgs[0].Status != SteeringDelivered || msgs[0].SentBy != ActorWatchdog || msgs[1].Status != SteeringQueued || msgs[1].Text != "run the tests again" {
		t.Fatalf("steering after the nudges: %+v", msgs)
	}
	// Still active: the watchdog's own raise is refused; the agent speaks.
	a, won, err := s.CloseAlert(ctx, a.ID, AlertSelfRecovered, "a message")
	if err != nil || !won || a.Status != AlertSelfRecovered {
		t.Fatalf("self-recovered: %+v %v %v", a, won, err)
	}
	_, err = s.DecideAlert(ctx, AlertDecision{ID: a.ID, Action: AlertDismiss, By: "ana", Surface: SurfaceTerminal})
	var de *DecidedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "already self_recovered via supervisor by watchdog") {
		t.Fatalf("dismissing a recovered alert: %v", err)
	}
	// A new alert may come once the last one is over.
	b, err := s.RaiseAlert(ctx, ses.ID, "silent again")
	if err != nil || b.ID == a.ID {
		t.Fatalf("a new alert: %+v %v", b, err)
	}
	// Pausing the watchdog dismisses it.
	if err := s.SetWatchdogPaused(ctx, ses.ID, true, "ana", SurfaceTerminal); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.WatchdogPaused(ctx, ses.ID); !p {
		t.Fatal("not paused")
	}
	if b, _ = s.Alert(ctx, b.ID); b.Status != AlertDismissed {
		t.Fatalf("pausing left the alert %s", b.Status)
	}
	// Stop from an alert ends the session.
	s.SetWatchdogPaused(ctx, ses.ID, false, "ana", SurfaceTerminal)
	c, _ := s.RaiseAlert(ctx, ses.ID, "silent")
	if _, err := s.DecideAlert(ctx, AlertDecision{ID: c.ID, Action: AlertStop, By: "ana", Surface: SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Session(ctx, ses.ID); got.Status != SessionTerminated || !strings.Contains(got.EndReason, "stall alert") {
		t.Fatalf("session after stop: %+v", got)
	}
}

// Of 20 people answering the same prompt at once, one wins; the others are
// told who. A late answer gets the timeout's outcome: continue, except
// error_recovery, which expires.
func TestPromptDecisionsAndTimeouts(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newStore(t, Options{Now: clock, MaxSessions: -1})
	ses := activeSession(t, s, "ana")
	p, err := s.RaisePrompt(ctx, NewPrompt{SessionID: ses.ID, Kind: PromptClarification, Text: "Which database?", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RaisePrompt(ctx, NewPrompt{SessionID: ses.ID, Kind: PromptContinuation}); !errors.Is(err, ErrPendingExists) {
		t.Fatalf("a second pending prompt: %v", err)
	}
	if _, err := s.DecidePrompt(ctx, PromptDecision{ID: p.ID, Action: ActionRefine, By: "ana", Surface: SurfaceTerminal}); err == nil {
		t.Fatal("refine without an instruction was accepted")
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.DecidePrompt(ctx, PromptDecision{ID: p.ID, Action: ActionRefine, Instruction: "use SQLite " + string(rune('a'+i)), By: "ana", Surface: SurfaceWeb})
			var de *DecidedError
			switch {
			case err == nil:
				wins.Add(1)
			case errors.As(err, &de) && strings.Contains(err.Error(), "already refined via web by @ana"):
			default:
				t.Errorf("a losing answer: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d answers won", wins.Load())
	}
	// Timeouts: continuation continues, error_recovery never does.
	for _, c := range []struct{ kind, want string }{{PromptContinuation, PromptContinued}, {PromptErrorRecovery, PromptExpired}} {
		p, err := s.RaisePrompt(ctx, NewPrompt{SessionID: ses.ID, Kind: c.kind, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(2 * time.Minute)
		mu.Unlock()
		got, err := s.DecidePrompt(ctx, PromptDecision{ID: p.ID, Action: ActionContinue, By: "ana", Surface: SurfaceTerminal})
		if !errors.Is(err, ErrExpired) || got.Status != c.want || got.Surface != SurfaceTimeout {
			t.Fatalf("%s answered late: %+v %v", c.kind, got, err)
		}
		if _, won, _ := s.TimeoutPrompt(ctx, p.ID); won {
			t.Fatalf("%s timed out twice", c.kind)
		}
	}
}

// Ending a session withdraws its prompt, dismisses its alert and drops its
// queued steering: nothing waits on a run that is over.
func TestEndingASessionClosesWhatWaits(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	p, _ := s.RaisePrompt(ctx, NewPrompt{SessionID: ses.ID, Kind: PromptContinuation})
	a, _ := s.RaiseAlert(ctx, ses.ID, "silent")
	m, err := s.Steer(ctx, ses.ID, "also run vet", "ana", SurfaceTerminal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionTerminated, By: "ana", Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Prompt(ctx, p.ID)
	a, _ = s.Alert(ctx, a.ID)
	msgs, _ := s.SteeringOf(ctx, ses.ID)
	if p.Status != PromptWithdrawn || a.Status != AlertDismissed || msgs[0].ID != m.ID || msgs[0].Status != SteeringDropped {
		t.Fatalf("after the end: prompt %s, alert %s, steering %s", p.Status, a.Status, msgs[0].Status)
	}
	if _, err := s.Steer(ctx, ses.ID, "too late", "ana", SurfaceTerminal); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("steering an ended session: %v", err)
	}
}

// A steering message is delivered once, whoever tries.
func TestSteeringIsClaimedOnce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	m, _ := s.Steer(ctx, ses.ID, "use the v2 API", "ana", SurfaceTerminal)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if won, err := s.ClaimSteering(ctx, m.ID); err != nil {
				t.Error(err)
			} else if won {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if q, _ := s.QueuedSteering(ctx, ses.ID); wins.Load() != 1 || len(q) != 0 {
		t.Fatalf("%d deliveries, %d still queued", wins.Load(), len(q))
	}
}

// accept_diff's claim: once; a release makes it claimable again.
func TestClaimApprovedOnce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r, _ := s.RaiseRequest(ctx, NewRequest{SessionID: ses.ID, Kind: KindEdit, Tool: "edit", File: "a.go", Diff: "-x\n+y\n", FileHash: "abc"})
	if _, err := s.ClaimApproved(ctx, r.ID); err == nil || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("claiming a pending request: %v", err)
	}
	s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal})
	c, err := s.ClaimApproved(ctx, r.ID)
	if err != nil || c.FileHash != "abc" {
		t.Fatalf("claim: %+v %v", c, err)
	}
	if _, err := s.ClaimApproved(ctx, r.ID); !errors.Is(err, ErrConsumed) {
		t.Fatalf("second claim: %v", err)
	}
	s.ReleaseClaim(ctx, r.ID, "patch_conflict")
	if _, err := s.ClaimApproved(ctx, r.ID); err != nil {
		t.Fatalf("claim after a release: %v", err)
	}
}

// The audit log stays append-only, except for the rows of a purged session.
func TestAuditDeletableOnlyForPurgedSessions(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE session_id = ?`, ses.ID); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("deleting a live session's audit rows: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE session_id IS NULL`); err != nil {
		t.Fatalf("nothing to delete should not fail: %v", err)
	}
	s.Record(ctx, Event{Actor: "x", Surface: SurfaceSupervisor, Action: "note"})
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE session_id IS NULL`); err == nil {
		t.Fatal("a row of no session was deleted")
	}
}
