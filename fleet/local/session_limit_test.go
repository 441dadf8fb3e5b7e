package local

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/store"
)

// A supervised start beyond max_concurrent_sessions is accepted (the
// supervisor is what takes the session's place): its run then ends failed
// with the limit, without the CLI, and its task goes BLOCKED saying why —
// the run executor's end of a run that could not start, booked by the
// fleet.
func TestSupervisedRunBeyondTheSessionLimitEndsBlocked(t *testing.T) {
	ws := newRepo(t)
	cfg, err := os.ReadFile(ws.ConfigPath())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.ConfigPath(), append(cfg, "\nsupervision:\n  max_concurrent_sessions: 1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)

	st, err := store.OpenWorkspace(ctx, ws, store.Options{MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, err := st.CreateSession(ctx, store.NewSession{Owner: "bo", Workspace: ws.Root, CLI: "claude", Title: "another run"})
	if err != nil {
		t.Fatal(err)
	}
	// Its supervisor is this test process: alive, so the place is held.
	if err := st.SetSupervisor(ctx, held.ID, store.Supervisor{PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSessionStatus(ctx, held.ID, store.Transition{To: store.SessionActive, By: "bo"}); err != nil {
		t.Fatal(err)
	}

	res, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3", ApprovalMode: "ask", Owner: "ana"})
	if err != nil {
		t.Fatalf("the start was refused: %v", err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	run, err := f.lastRun(ctx, "papi", res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != fleet.RunFailed || !strings.Contains(run.ExitReason, "the supervised run was refused") || !strings.Contains(run.ExitReason, "task c3c3c3 is BLOCKED") {
		t.Errorf("the run: %s, %q", run.Status, run.ExitReason)
	}
	if tk := taskOf(t, ws, "c3c3c3"); tk.Status != "BLOCKED" {
		t.Errorf("the task is %s, want BLOCKED", tk.Status)
	}
	if ses, err := st.Sessions(ctx, store.SessionFilter{}); err != nil || len(ses) != 2 || ses[0].Live() && ses[1].Live() {
		t.Errorf("sessions %+v, %v: the refused one ended", ses, err)
	}
}
