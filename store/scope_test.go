package store

import (
	"context"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
)

// An approval for the session is kept with the request (its scope, in the
// audit line too) and read back as the session's approvals until the
// session ends; a rejection has no scope, and another session sees none.
func TestSessionApprovalsLastAsLongAsTheSession(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses, other := activeSession(t, s, "ana"), activeSession(t, s, "ana")

	r1 := raise(t, s, ses.ID, 0)
	if _, err := s.Decide(ctx, Decision{RequestID: r1.ID, By: "ana", Surface: SurfaceTerminal, Scope: ScopeSession, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	r2 := raise(t, s, ses.ID, 0)
	got, err := s.Decide(ctx, Decision{RequestID: r2.ID, Approve: true, By: "ana", Surface: SurfaceTerminal, Scope: ScopeSession})
	if err != nil || got.Scope != ScopeSession || got.Always {
		t.Fatalf("decide for the session: %+v, %v", got, err)
	}
	if r, _ := s.Request(ctx, r1.ID); r.Scope != "" {
		t.Errorf("a rejection kept scope %q", r.Scope)
	}
	list, err := s.SessionApprovals(ctx, ses.ID)
	if err != nil || len(list) != 1 || list[0].ID != r2.ID {
		t.Fatalf("session approvals %+v, %v; want request %d", list, err, r2.ID)
	}
	if list, _ := s.SessionApprovals(ctx, other.ID); len(list) != 0 {
		t.Errorf("another session has %d session approvals", len(list))
	}
	evs, err := s.Audit(ctx, ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Action == "request_approved" && e.RequestID == r2.ID {
			found = strings.Contains(string(e.Detail), `"scope":"session"`)
		}
	}
	if !found {
		t.Errorf("no request_approved audit line with the scope: %+v", evs)
	}

	if _, err := s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionTerminated, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.SessionApprovals(ctx, ses.ID); len(list) != 0 {
		t.Errorf("an ended session still approves %d requests", len(list))
	}
	r3 := raise(t, s, other.ID, 0)
	if _, err := s.Decide(ctx, Decision{RequestID: r3.ID, Approve: true, By: "ana", Surface: SurfaceTerminal, Scope: "forever"}); agenterr.KindOf(err) != agenterr.Invalid {
		t.Errorf("an unknown scope: %v, want invalid", err)
	}
	if r, _ := s.Request(ctx, r3.ID); r.Status != StatusPending {
		t.Errorf("a refused decision changed the request to %s", r.Status)
	}
}
