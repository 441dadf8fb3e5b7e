package coder_test

import (
	"context"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
)

// A delete while a delete build is under way sends no second build: it
// answers 409 with the one in flight, queued or running, whoever sent it.
// A delete that failed can be tried again.
func TestASecondDeleteReportsTheOneInFlight(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	for _, n := range []string{"papi", "sony"} {
		if _, err := w.b.Create(ctx, fleet.CreateInput{Name: n, Spec: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	w.srv.Settle()
	first, err := w.b.Delete(ctx, "papi", false)
	if err != nil || first.ArchivedTo == "" {
		t.Fatalf("first delete: %+v, %v", first, err)
	}
	builds := w.srv.Requests(codertest.RouteCreateBuild)
	for _, when := range []string{"queued", "running"} {
		a, err := w.b.Show(ctx, "papi")
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.b.Delete(ctx, "papi", false)
		fleettest.WantCode(t, err, fleet.CodeConflict, "")
		wantMention(t, err, "already being deleted", "build #2", string(a.Status), "alice", "2026-01-05T09:00:")
		if n := w.srv.Requests(codertest.RouteCreateBuild); n != builds {
			t.Fatalf("a delete while one is %s sent %d more builds", when, n-builds)
		}
		w.srv.Advance()
	}
	_, err = w.b.Delete(ctx, "papi", false)
	fleettest.WantCode(t, err, fleet.CodeNotFound, "agent_name")

	// Deleted in Coder itself: the same answer, nothing archived or sent.
	c := newClient(t, w.srv)
	if _, err := c.CreateBuild(ctx, mustWorkspace(t, c, "sony").ID, coder.TransitionDelete); err != nil {
		t.Fatal(err)
	}
	builds = w.srv.Requests(codertest.RouteCreateBuild)
	_, err = w.b.Delete(ctx, "sony", false)
	fleettest.WantCode(t, err, fleet.CodeConflict, "")
	if n := w.srv.Requests(codertest.RouteCreateBuild); n != builds {
		t.Fatalf("a delete while Coder deletes sent %d builds", n-builds)
	}
	if h, err := w.b.History(ctx, "sony", 1, 20); err != nil || h.TotalCount != 1 {
		t.Fatalf("the refused delete touched sony's history: %+v, %v", h, err)
	}

	// A delete build that failed: deleting again sends a new one.
	w.srv.Settle()
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "kept", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	w.srv.FailNextBuild("kept")
	if _, err := w.b.Delete(ctx, "kept", false); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	if a, err := w.b.Show(ctx, "kept"); err != nil || a.Status != fleet.StatusFailed {
		t.Fatalf("after a failed delete: %+v, %v", a, err)
	}
	if _, err := w.b.Delete(ctx, "kept", false); err != nil {
		t.Fatalf("deleting again after a failed delete: %v", err)
	}
	w.srv.Settle()
	_, err = w.b.Show(ctx, "kept")
	fleettest.WantCode(t, err, fleet.CodeNotFound, "agent_name")
}
