package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The outbox keeps what a surface has to post, hands each session's items
// out in order (a session's later item waits for its first), keeps a
// refused item with when to try again and the steps already posted, and
// forgets an item once posted. The cursor moves with the enqueue.
func TestOutboxKeepsEachSessionsOrder(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	a := activeSession(t, s, "ana")
	b := activeSession(t, s, "bo")
	ra := raise(t, s, a.ID, 0)
	raise(t, s, b.ID, 0)
	if _, err := s.Decide(ctx, Decision{RequestID: ra.ID, Approve: true, By: "ana", Surface: SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	raise(t, s, a.ID, 0)
	evs, err := s.AuditAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var items []OutboxItem
	for _, e := range evs {
		if e.Action == "request_raised" {
			items = append(items, OutboxItem{Seq: e.Seq, SessionID: e.SessionID})
		}
	}
	last := evs[len(evs)-1].Seq
	if err := s.EnqueueOutbox(ctx, SurfaceSlack, items, last); err != nil {
		t.Fatal(err)
	}
	// Again (a crash between reading and the next enqueue): nothing twice.
	if err := s.EnqueueOutbox(ctx, SurfaceSlack, items, last); err != nil {
		t.Fatal(err)
	}
	if c, ok, _ := s.Cursor(ctx, SurfaceSlack); !ok || c != last {
		t.Fatalf("cursor %d %v, want %d", c, ok, last)
	}
	if n, _ := s.OutboxLen(ctx, SurfaceSlack); n != 3 {
		t.Fatalf("%d items, want 3", n)
	}
	heads, err := s.OutboxHeads(ctx, SurfaceSlack)
	if err != nil || len(heads) != 2 || heads[0].Seq != items[0].Seq || heads[1].Seq != items[1].Seq {
		t.Fatalf("heads: %+v %v", heads, err)
	}
	if heads[0].Event.Action != "request_raised" || heads[0].Event.RequestID != ra.ID || heads[0].Event.SessionID != a.ID {
		t.Fatalf("the head's audit event: %+v", heads[0].Event)
	}
	// The first of session a is refused: it stays first, with its retry time,
	// its error and the step already posted.
	next := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	s.OutboxStep(ctx, SurfaceSlack, items[0].Seq, "thread")
	s.OutboxStep(ctx, SurfaceSlack, items[0].Seq, "post")
	if err := s.OutboxRetry(ctx, SurfaceSlack, items[0].Seq, next, "channel_not_found"); err != nil {
		t.Fatal(err)
	}
	heads, _ = s.OutboxHeads(ctx, SurfaceSlack)
	h := heads[0]
	if h.Seq != items[0].Seq || h.Attempts != 1 || !h.NextAt.Equal(next) || h.LastError != "channel_not_found" || !h.Has("thread") || !h.Has("post") || h.Has("diff") {
		t.Fatalf("the refused head: %+v", h)
	}
	s.OutboxDone(ctx, SurfaceSlack, items[0].Seq)
	heads, _ = s.OutboxHeads(ctx, SurfaceSlack)
	if len(heads) != 2 || heads[0].Seq != items[1].Seq || heads[1].Seq != items[2].Seq {
		t.Fatalf("heads after the first was posted: %+v", heads)
	}
}

// One holder at a time; the holder renews; another takes an expired lease
// or a released one.
func TestLeaseHasOneHolder(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := newStore(t, Options{Now: clock})
	if _, held, err := s.AcquireLease(ctx, SurfaceSlack, "one", 30*time.Second); err != nil || !held {
		t.Fatalf("first: %v %v", held, err)
	}
	l, held, _ := s.AcquireLease(ctx, SurfaceSlack, "two", 30*time.Second)
	if held || l.Holder != "one" || !l.ExpiresAt.Equal(now.Add(30*time.Second)) {
		t.Fatalf("second while held: %+v %v", l, held)
	}
	advance(20 * time.Second)
	if _, held, _ := s.AcquireLease(ctx, SurfaceSlack, "one", 30*time.Second); !held {
		t.Fatal("the holder could not renew")
	}
	advance(20 * time.Second) // 40 s after the first, 20 after the renewal
	if _, held, _ := s.AcquireLease(ctx, SurfaceSlack, "two", 30*time.Second); held {
		t.Fatal("a renewed lease was taken")
	}
	advance(11 * time.Second)
	if _, held, _ := s.AcquireLease(ctx, SurfaceSlack, "two", 30*time.Second); !held {
		t.Fatal("an expired lease was not taken")
	}
	s.ReleaseLease(ctx, SurfaceSlack, "one") // not its own any more: nothing
	if l, held, _ := s.AcquireLease(ctx, SurfaceSlack, "one", 30*time.Second); held || l.Holder != "two" {
		t.Fatalf("a release by a former holder freed the lease: %+v", l)
	}
	s.ReleaseLease(ctx, SurfaceSlack, "two")
	if _, held, _ := s.AcquireLease(ctx, SurfaceSlack, "one", 30*time.Second); !held {
		t.Fatal("a released lease was not taken")
	}
}

// Retention purges the refusals that name no session (an unlinked member
// clicking, a slash command): nothing else ever would. Refusals of a live
// session, and every other sessionless line, stay.
func TestPurgeTakesOldSessionlessRefusals(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newStore(t, Options{Now: clock})
	live := activeSession(t, s, "ana")
	for range 3 {
		s.Record(ctx, Event{Actor: "slack:U0MAL", Surface: SurfaceSlack, Action: ActionSlackRefused})
	}
	s.Record(ctx, Event{SessionID: live.ID, Actor: "eve", Surface: SurfaceSlack, Action: ActionSlackRefused})
	s.Record(ctx, Event{Actor: "ana", Surface: SurfaceTerminal, Action: "policy_changed"})
	mu.Lock()
	now = now.Add(40 * 24 * time.Hour)
	mu.Unlock()
	s.Record(ctx, Event{Actor: "slack:U0MAL", Surface: SurfaceSlack, Action: ActionSlackRefused}) // recent: stays
	before := now.Add(-30 * 24 * time.Hour)
	dry, err := s.Purge(ctx, PurgeOptions{Before: before, DryRun: true})
	if err != nil || dry.Audit != 3 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	rep, err := s.Purge(ctx, PurgeOptions{Before: before})
	if err != nil || rep.Audit != 3 {
		t.Fatalf("purge: %+v %v", rep, err)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM audit WHERE action = 'slack_refused'`); n != 2 {
		t.Fatalf("%d refusals left, want the live session's and the recent one", n)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE action = 'policy_changed'`); err == nil {
		t.Fatal("a sessionless line other than a refusal was deleted")
	}
}

// A file written at schema version 5 (testdata/v5.db) migrates keeping its
// rows: the session's thread and request messages, the cursor; its
// sessionless refusal becomes purgeable; the outbox and the lease work.
func TestMigrateFromV5Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("testdata/v5.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, src, 0o600)
	if v := fileVersion(t, path); v != 5 {
		t.Fatalf("the fixture has schema version %d, want 5", v)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("the v5 file does not open: %v", err)
	}
	defer s.Close()
	if got, want := schemaOf(t, s), schemaOf(t, newStore(t, Options{})); !sameSchema(got, want) {
		t.Errorf("migrated schema differs from a new file's:\n got %v\nwant %v", got, want)
	}
	if p, err := s.PostOf(ctx, SurfaceSlack, ItemRequest, 1); err != nil || p.TS != "1700000000.000002" || p.Channel != "C0OWN" {
		t.Fatalf("the request's message after migration: %+v %v", p, err)
	}
	last, _ := s.LastAuditSeq(ctx)
	if c, ok, err := s.Cursor(ctx, SurfaceSlack); err != nil || !ok || c != last {
		t.Fatalf("the cursor after migration: %d %v %v (last %d)", c, ok, err, last)
	}
	if _, held, err := s.AcquireLease(ctx, SurfaceSlack, "me", time.Minute); err != nil || !held {
		t.Fatalf("the lease after migration: %v %v", held, err)
	}
	if err := s.EnqueueOutbox(ctx, SurfaceSlack, []OutboxItem{{Seq: last, SessionID: 1}}, last); err != nil {
		t.Fatalf("the outbox after migration: %v", err)
	}
	rep, err := s.Purge(ctx, PurgeOptions{Before: time.Now().Add(time.Hour)})
	if err != nil || rep.Audit != 1 || rep.Sessions != 0 {
		t.Fatalf("the old refusal after migration: %+v %v", rep, err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE session_id = 1`); err == nil {
		t.Fatal("a live session's audit rows were deleted after migration")
	}
	if n := count(t, s, `SELECT COUNT(*) FROM audit WHERE session_id = 1`); n == 0 {
		t.Fatal("the session's audit rows are gone")
	}
}

// A timeout under a second reads in milliseconds, not "0s".
func TestExpiryReadsTheTimeoutAsSet(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, 200*time.Millisecond)
	got, won, err := s.Expire(ctx, r.ID)
	if err != nil || !won || !strings.Contains(got.Reason, "timed out after 200ms") {
		t.Fatalf("%+v %v %v", got, won, err)
	}
}
