package local

// A supervised fleet run (approval mode ask) with the real claude against
// a scripted fake that asks for `touch ok.txt`: the request waits for a
// person, the session is the run (its agent, task, run ID), approving it
// lets the agent finish; the supervisor SIGKILLed while a request waits
// leaves the session and the request interrupted, no process of the run,
// the run failed with the reason and its matrix task BLOCKED.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
)

func supervisedFleet(t *testing.T) (*Fleet, *store.Store) {
	t.Helper()
	fake := fakemodel.NewClaudeScript(t, fakemodel.ShellOnce("touch", "touch ok.txt", "done"))
	f := realCLIFleet(t, fakemodel.Claude(t, fake.URL))
	fakemodel.WriteFile(t, f.ws.ConfigPath(), "fleet:\n  approval_mode: ask\n")
	st, err := store.OpenWorkspace(context.Background(), f.ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return f, st
}

func pendingOf(t *testing.T, st *store.Store) store.PendingView {
	t.Helper()
	var p []store.PendingView
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		p, _ = st.Pending(context.Background())
		return len(p) > 0
	}, "the supervised run raised no request")
	return p[0]
}

func TestFleetSupervisedRunWaitsForApproval(t *testing.T) {
	t.Parallel()
	f, st := supervisedFleet(t)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", CLI: "claude", Spec: "Please touch ok.txt in your folder", Owner: "ana"}); err != nil {
		t.Fatal(err)
	}
	p := pendingOf(t, st)
	if p.Agent != "papi" || p.Owner != "ana" || p.CLI != "claude" || !strings.Contains(p.Command, "touch ok.txt") {
		t.Fatalf("the request as the inbox lists it: %+v", p)
	}
	// While the request waits the agent is waiting, for it (issue 30).
	if a := waitReal(t, f, "papi", nil, fleet.StatusWaiting); a.Waiting == nil || a.Waiting.ID != p.ID {
		t.Fatalf("papi waits for %+v, want request %d", a.Waiting, p.ID)
	}
	if _, err := st.Decide(ctx, store.Decision{RequestID: p.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	a := waitReal(t, f, "papi", nil, fleet.StatusIdle)
	if _, err := os.Stat(filepath.Join(a.Workspace.Path, "ok.txt")); err != nil {
		t.Fatalf("approved, but ok.txt is not in the worktree: %v", err)
	}
	h, _ := f.History(ctx, "papi", 1, fleet.DefaultPageSize)
	ses, err := st.Session(ctx, p.SessionID)
	if err != nil || len(h.Tasks) != 1 || ses.RunID != h.Tasks[0].ID || ses.Status != store.SessionTerminated || h.Tasks[0].Status != fleet.RunCompleted {
		t.Fatalf("session %+v (%v), history %+v", ses, err, h.Tasks)
	}
	// What `agentinfra session show` and the console print as its progress.
	if ses.Progress != "1 tool call, 1 turn done · “done”" || ses.LastTool != "Bash" {
		t.Fatalf("the session's progress %q, last tool %q", ses.Progress, ses.LastTool)
	}
}

func TestFleetSupervisorKilledWhileARequestWaits(t *testing.T) {
	t.Parallel()
	f, st := supervisedFleet(t)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "sony", CLI: "claude", Spec: "warm up"}); err != nil {
		t.Fatal(err)
	}
	waitReal(t, f, "sony", nil, fleet.StatusIdle, fleet.StatusFailed) // the spec run: no tool, no request
	if _, err := f.Start(ctx, fleet.StartInput{Name: "sony", TaskID: "c3c3c3", Note: "Please touch ok.txt", Owner: "ana"}); err != nil {
		t.Fatal(err)
	}
	p := pendingOf(t, st)
	sups, _ := st.LiveSupervisors(ctx)
	sup := sups[p.SessionID]
	if sup.PID == 0 {
		t.Fatalf("the session names no supervisor: %+v", sups)
	}
	syscall.Kill(sup.PID, syscall.SIGKILL)
	a := waitReal(t, f, "sony", nil, fleet.StatusIdle, fleet.StatusFailed)
	ses, _ := st.Session(ctx, p.SessionID)
	req, _ := st.Request(ctx, p.ID)
	if ses.Status != store.SessionInterrupted || req.Status != store.StatusInterrupted {
		t.Errorf("after the kill: session %s (%s), request %s", ses.Status, ses.EndReason, req.Status)
	}
	if task, _ := loadDoc(t, f.ws).Task("c3c3c3"); task.Status != "BLOCKED" {
		t.Errorf("the task is %s, want BLOCKED", task.Status)
	}
	h, _ := f.History(ctx, "sony", 1, fleet.DefaultPageSize)
	if len(h.Tasks) == 0 || h.Tasks[0].Status != fleet.RunFailed || !strings.Contains(h.Tasks[0].ExitReason, "supervisor") {
		t.Errorf("the run: %+v", h.Tasks)
	}
	if _, err := os.Stat(filepath.Join(a.Workspace.Path, "ok.txt")); err == nil {
		t.Error("nobody approved, but ok.txt exists")
	}
}
