package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An approval for the session covers the same action in that session only;
// a plain approval, another command or another session is not covered.
func TestSessionApprovalCoversTheSameActionInItsSessionOnly(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	same := NewRequest{SessionID: ses.ID, Kind: KindCommand, Tool: "Bash", Command: "touch ok.txt"}

	plain := raise(t, s, ses.ID, time.Hour)
	if _, err := s.Decide(ctx, Decision{RequestID: plain.ID, Approve: true, By: "ana", Surface: SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SessionApproval(ctx, ses.ID, same); ok || err != nil {
		t.Fatalf("a plain approval covers the session: %v %v", ok, err)
	}
	r := raise(t, s, ses.ID, time.Hour)
	got, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: SurfaceWeb, ForSession: true})
	if err != nil || got.Scope != ScopeSession {
		t.Fatalf("approve for the session: %+v %v", got, err)
	}
	if prior, ok, err := s.SessionApproval(ctx, ses.ID, same); !ok || err != nil || prior.ID != r.ID || prior.DecidedBy != "ana" {
		t.Fatalf("the same action is not covered: %+v %v %v", prior, ok, err)
	}
	other := same
	other.Command = "touch two.txt"
	if _, ok, _ := s.SessionApproval(ctx, ses.ID, other); ok {
		t.Error("another command is covered")
	}
	bo := activeSession(t, s, "bo")
	if _, ok, _ := s.SessionApproval(ctx, bo.ID, same); ok {
		t.Error("another session is covered")
	}
	if _, err := s.Decide(ctx, Decision{RequestID: raise(t, s, ses.ID, time.Hour).ID, Approve: true, By: "ana", Surface: SurfaceWeb, ForSession: true, Always: true}); err == nil {
		t.Error("a decision both for the session and always was taken")
	}
	events, _ := s.Audit(ctx, ses.ID)
	found := false
	for _, e := range events {
		if e.RequestID == r.ID && e.Action == "request_approved" && string(e.Detail) != "" && strings.Contains(string(e.Detail), `"scope":"session"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the audit log does not keep the approval's scope: %+v", events)
	}
}
