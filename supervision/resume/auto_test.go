package resume

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// supervisedDispatch is a workspace with supervision.resume: auto (and
// max_resumes left at its default), and in its store an active session of
// a supervised dispatch's run, supervised by this process.
func supervisedDispatch(t *testing.T) (*workspace.Workspace, *store.Store, store.Session) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent", "config.yaml"), []byte("supervision:\n  resume: auto\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	row, err := agentrun.RowOf(&agentrun.Record{RunID: "a1-1", Caller: agentrun.CallerDispatch, TaskID: "a1", ApprovalMode: runner.ApprovalAsk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveRun(ctx, row); err != nil {
		t.Fatal(err)
	}
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "claude", RunID: "a1-1", TaskID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	if err := st.SetSupervisor(ctx, ses.ID, store.Supervisor{PID: me, Start: contain.ProcStart(me)}); err != nil {
		t.Fatal(err)
	}
	if ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	return ws, st, ses
}

// Issue 33: supervision.resume: auto resumes a run whose supervisor died
// at most supervision.max_resumes times (default 3). Here each resumed
// run's supervisor dies at once (`true`); the reap every supervision
// command runs first finds it dead and resumes the run again — three times,
// then the run waits for a person: the fourth automatic resume is refused
// with the limit and what to do, and a person's resume still goes.
func TestAutoResumeStopsAtMaxResumes(t *testing.T) {
	ws, st, ses := supervisedDispatch(t)
	ctx := context.Background()
	conf, err := supervision.LoadConfig(ws)
	if err != nil || conf.MaxResumes != 3 {
		t.Fatalf("supervision.max_resumes by default: %d %v", conf.MaxResumes, err)
	}
	r := &Resumer{WS: ws, SupervisorArgv: []string{"true"}}
	var resumed []supervision.Resumed
	var failed []error
	reap := r.Reaper(func(supervised.Reaped) {}, Report{Resumed: func(d supervision.Resumed) { resumed = append(resumed, d) }, Failed: func(err error) { failed = append(failed, err) }})

	// The first supervisor dies: SIGKILL is what a supervisor cannot see
	// coming; here it is recorded as a process that is gone.
	if err := st.SetSupervisor(ctx, ses.ID, store.Supervisor{PID: deadPID(t), Start: "0"}); err != nil {
		t.Fatal(err)
	}
	reapOnce := func() {
		if err := reap(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	for round := 1; round <= 3; round++ {
		// A command finds the dead supervisor (the session reaped to
		// interrupted) and resumes the run.
		poll.Eventually(t, func() bool { reapOnce(); return len(resumed) >= round }, "resume %d: none, errors %v", round, failed)
	}
	// The third resumed run's supervisor dies too: reaped, not resumed.
	poll.Eventually(t, func() bool {
		reapOnce()
		s, _ := st.Session(ctx, ses.ID)
		return s.Status == store.SessionInterrupted
	}, "the third resumed run's dead supervisor was not reaped")
	reapOnce()
	if len(resumed) != 3 || len(failed) != 0 {
		t.Fatalf("automatic resumes: %d (want 3, supervision.max_resumes), errors %v", len(resumed), failed)
	}
	s, _ := st.Session(ctx, ses.ID)
	if s.Status != store.SessionInterrupted {
		t.Fatalf("after the limit the session is %s, want interrupted (waiting for a person)", s.Status)
	}
	if n, _ := st.Resumes(ctx, ses.ID); n != 3 {
		t.Fatalf("%d resumes recorded, want 3", n)
	}
	reasons := auditReasons(t, st, ses.ID)
	for i, want := range []string{"(supervision.resume: auto, 1 of 3)", "(supervision.resume: auto, 2 of 3)", "(supervision.resume: auto, 3 of 3)"} {
		if i >= len(reasons) || !strings.HasSuffix(reasons[i], want) {
			t.Errorf("resume %d's reason: %q, want …%s", i+1, reasons, want)
		}
	}

	// Another process racing past the check is refused by the store.
	_, err = st.ReopenSession(ctx, ses.ID, store.Reopen{By: store.ActorAgentinfra, Auto: true, Max: conf.MaxResumes})
	if !errors.Is(err, store.ErrResumeLimit) || !strings.Contains(err.Error(), "supervision.max_resumes is 3") || !strings.Contains(err.Error(), "agentinfra session resume") {
		t.Fatalf("a fourth automatic resume: %v", err)
	}
	// A person may still resume it.
	if _, err := r.Resume(ctx, st, s, "ana"); err != nil {
		t.Fatalf("ana's resume after the limit: %v", err)
	}
	if reasons := auditReasons(t, st, ses.ID); len(reasons) != 4 || reasons[3] != "resumed by @ana" {
		t.Errorf("the resumes: %q", reasons)
	}
}

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// auditReasons are the reasons of the session's resumes, in order.
func auditReasons(t *testing.T, st *store.Store, id int64) []string {
	t.Helper()
	entries, err := st.Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Action == store.ActionSessionResumed {
			var d struct {
				Reason string `json:"reason"`
			}
			if err := json.Unmarshal(e.Detail, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d.Reason)
		}
	}
	return out
}
