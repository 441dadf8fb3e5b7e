package store

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state", FileName), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func activeSession(t testing.TB, s *Store, owner string) Session {
	t.Helper()
	ctx := context.Background()
	ses, err := s.CreateSession(ctx, NewSession{Owner: owner, Workspace: "/w", CLI: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	ses, err = s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionActive, By: owner})
	if err != nil {
		t.Fatal(err)
	}
	return ses
}

func raise(t testing.TB, s *Store, session int64, timeout time.Duration) Request {
	t.Helper()
	r, err := s.RaiseRequest(context.Background(), NewRequest{SessionID: session, Kind: KindCommand, Tool: "Bash",
		Command: "touch ok.txt", Title: "Run touch ok.txt", Risk: RiskLow, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDecisionIsACompareAndSet(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, time.Hour)

	got, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal})
	if err != nil || got.Status != StatusApproved || got.DecidedBy != "ana" || got.Surface != SurfaceTerminal {
		t.Fatalf("first decision: %+v, %v", got, err)
	}
	_, err = s.Decide(ctx, Decision{RequestID: r.ID, Approve: false, By: "ana", Surface: SurfaceWeb, Reason: "no"})
	var de *DecidedError
	if !errors.As(err, &de) {
		t.Fatalf("second decision: want a DecidedError, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "already approved via terminal by @ana at ") {
		t.Errorf("the loser is not told who won: %q", msg)
	}
	if got, _ := s.Request(ctx, r.ID); got.Status != StatusApproved {
		t.Errorf("the losing decision changed the request: %+v", got)
	}
}

func TestOnePendingRequestPerSession(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	raise(t, s, ses.ID, 0)
	_, err := s.RaiseRequest(ctx, NewRequest{SessionID: ses.ID, Kind: KindCommand, Tool: "Bash", Title: "second"})
	if !errors.Is(err, ErrPendingExists) {
		t.Fatalf("a second pending request was accepted: %v", err)
	}
	other := activeSession(t, s, "bo")
	raise(t, s, other.ID, 0) // another session may have its own
}

func TestDecisionAfterExpiryIsRefusedAndNeverApproves(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newStore(t, Options{Now: clock})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, time.Hour)

	mu.Lock()
	now = now.Add(time.Hour + time.Second) // the bridge's timer has not fired (or its process died)
	mu.Unlock()
	got, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal})
	if !errors.Is(err, ErrExpired) {
		t.Fatalf("a late approval was not refused as expired: %+v, %v", got, err)
	}
	if got, _ := s.Request(ctx, r.ID); got.Status != StatusExpired || got.Surface != SurfaceTimeout || !strings.Contains(got.Reason, "timed out after 1h0m0s") {
		t.Fatalf("the request is not expired by the timeout: %+v", got)
	}
	// The bridge's timer fires later: it finds the request expired, not approved.
	got, won, err := s.Expire(ctx, r.ID)
	if err != nil || won || got.Status != StatusExpired {
		t.Fatalf("Expire after the refusal: %+v won=%v %v", got, won, err)
	}
}

func TestExpireLosesToAnEarlierDecision(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, time.Hour)
	if _, err := s.Decide(ctx, Decision{RequestID: r.ID, By: "ana", Surface: SurfaceWeb, Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	got, won, err := s.Expire(ctx, r.ID)
	if err != nil || won || got.Status != StatusRejected || got.Reason != "not now" {
		t.Fatalf("the timeout overrode a decision: %+v won=%v %v", got, won, err)
	}
}

func TestMaxConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	var held []Session
	for range DefaultMaxSessions {
		held = append(held, activeSession(t, s, "ana"))
	}
	if _, err := s.SetSessionStatus(ctx, held[1].ID, Transition{To: SessionPaused, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	extra, err := s.CreateSession(ctx, NewSession{Owner: "ana", Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.SetSessionStatus(ctx, extra.ID, Transition{To: SessionActive, By: "ana"})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != 3 || len(le.Holding) != 3 {
		t.Fatalf("a fourth live session was not refused with the limit and the holders: %v", err)
	}
	for _, h := range held {
		if !strings.Contains(err.Error(), " "+itoa(h.ID)+" (") {
			t.Errorf("the refusal does not name session %d: %v", h.ID, err)
		}
	}
	if _, err := s.SetSessionStatus(ctx, held[0].ID, Transition{To: SessionTerminated, By: "ana", Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSessionStatus(ctx, extra.ID, Transition{To: SessionActive, By: "ana"}); err != nil {
		t.Fatalf("a freed place was not given: %v", err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestEndingASessionInterruptsItsPendingRequest(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, 0)
	if _, err := s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionInterrupted, By: ActorAgentinfra, Reason: "the supervisor died"}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Request(ctx, r.ID)
	if got.Status != StatusInterrupted {
		t.Fatalf("request not interrupted: %+v", got)
	}
	if _, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("a decision on an interrupted request: %v", err)
	}
	if _, err := s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionActive, By: "ana"}); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("an ended session came back: %v", err)
	}
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, 0)
	s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceTerminal})
	evs, err := s.Audit(ctx, ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range evs {
		actions = append(actions, e.Action)
	}
	if want := "session_created session_active request_raised request_approved"; strings.Join(actions, " ") != want {
		t.Errorf("audit = %v, want %s", actions, want)
	}
	for _, q := range []string{`UPDATE audit SET actor = 'x'`, `DELETE FROM audit`} {
		if _, err := s.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestWaitDecisionSeesAnotherStoresDecision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newStore(t, Options{PollInterval: 5 * time.Millisecond})
	other, err := Open(ctx, s.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, 0)
	done := make(chan Request)
	go func() {
		got, _ := s.WaitDecision(ctx, r.ID)
		done <- got
	}()
	if _, err := other.Decide(ctx, Decision{RequestID: r.ID, By: "ana", Surface: SurfaceWeb, Reason: "use a temp dir"}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got.Status != StatusRejected || got.Reason != "use a temp dir" {
		t.Fatalf("the waiter saw %+v", got)
	}
}

func TestNewerSchemaIsRefusedUntouched(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if _, err := s.db.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, s.Path(), Options{}); !errors.Is(err, ErrTooNew) {
		t.Fatalf("a newer file was opened: %v", err)
	}
}
