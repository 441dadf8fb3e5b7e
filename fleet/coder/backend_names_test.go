package coder_test

import (
	"context"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
)

// Coder allows workspace names of up to 32 characters (the metadata
// contract's 1–32), 12 more than a local agent's: a workspace that list
// shows is reachable by every other call, and create makes one.
func TestNamesOfUpToCodersLimitWorkEverywhere(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	const long = "keep-the-api-tests-green-for-us1"
	if len(long) != 32 {
		t.Fatalf("the name has %d characters", len(long))
	}
	a, err := w.b.Create(ctx, fleet.CreateInput{Name: long, Spec: "keep the API tests green"})
	if err != nil || a.Name != long {
		t.Fatalf("create a 32-character name: %+v, %v", a, err)
	}
	fleettest.WaitStatus(t, w, long, fleet.StatusIdle)
	started, err := w.b.Start(ctx, fleet.StartInput{Name: long, Text: "fix the flaky test"})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := w.b.Stop(ctx, long)
	if err != nil || stopped.ID != started.Task.ID || stopped.Status != fleet.RunStopped {
		t.Fatalf("stop: %+v, %v", stopped, err)
	}
	h, err := w.b.History(ctx, long, 1, 20)
	if err != nil || h.TotalCount != 2 || h.Tasks[0].ID != started.Task.ID {
		t.Fatalf("history: %+v, %v", h, err)
	}

	// A workspace made in Coder with a 25-character name.
	const made = "made-in-the-coder-console"
	if _, err := w.srv.AddReadyWorkspace("me", made, "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	for _, listed := range list {
		shown, err := w.b.Show(ctx, listed.Name)
		if err != nil || shown.Name != listed.Name || shown.Status != fleet.StatusIdle {
			t.Errorf("show of listed %s: %+v, %v", listed.Name, shown, err)
		}
	}
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: made, Text: "look around"}); err != nil {
		t.Fatalf("start %s: %v", made, err)
	}
	for _, name := range []string{long, made} {
		if d, err := w.b.Delete(ctx, name, false); err != nil || d.Name != name {
			t.Errorf("delete %s: %+v, %v", name, d, err)
		}
	}

	// One character more is Coder's limit: refused before anything is sent.
	creates := w.srv.Requests(codertest.RouteCreateWorkspace)
	tooLong := long + "x"
	_, err = w.b.Create(ctx, fleet.CreateInput{Name: tooLong, Spec: "s"})
	fleettest.WantCode(t, err, fleet.CodeBadInput, "name")
	wantMention(t, err, "33 characters", "1–32")
	if n := w.srv.Requests(codertest.RouteCreateWorkspace); n != creates {
		t.Errorf("a refused name reached Coder (%d creates)", n-creates)
	}
	lookups := w.srv.Requests(codertest.RouteWorkspaceByName)
	for _, call := range map[string]func() error{
		"show":    func() error { _, err := w.b.Show(ctx, tooLong); return err },
		"start":   func() error { _, err := w.b.Start(ctx, fleet.StartInput{Name: tooLong, Text: "x"}); return err },
		"stop":    func() error { _, err := w.b.Stop(ctx, tooLong); return err },
		"history": func() error { _, err := w.b.History(ctx, tooLong, 1, 20); return err },
		"delete":  func() error { _, err := w.b.Delete(ctx, tooLong, false); return err },
	} {
		fleettest.WantCode(t, call(), fleet.CodeBadInput, "agent_name")
	}
	if n := w.srv.Requests(codertest.RouteWorkspaceByName); n != lookups {
		t.Errorf("a refused name was looked up in Coder (%d lookups)", n-lookups)
	}
}
