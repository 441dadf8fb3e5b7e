package slack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/resume"
	"github.com/agentinfra/agentinfra/workspace"
)

// Issue 33: the first message of a remote session interrupted because its
// supervisor died has a Resume button. eve (neither its owner nor an
// operator) is refused like at the other buttons, nothing resumed; ana's
// click resumes it through the service (package resume's, its new
// supervisor here `true`): the session taken up again, the thread says
// who, the button gone.
func TestResumeButtonOnAnInterruptedSessionsThread(t *testing.T) {
	w := newWorldOf(t, testConfig(), nil, resumeWith("true"))
	ses := interruptedRun(t, w)
	root := w.message("Session 1 ")
	hasResume := func(m fakeslack.Message) bool {
		return strings.Contains(string(m.Last().Blocks), `"action_id":"session_resume"`)
	}
	root = w.waitMessage(root.TS, "the Resume button on the interrupted session's message", hasResume)

	w.click(eve, root, actionSessionResume, ses.ID)
	if e := w.ephemeral(eve.ID, "Not allowed"); !strings.Contains(e.Text, "resume session 1") {
		t.Errorf("eve's refusal: %+v", e)
	}
	if s, _ := w.st.Session(w.ctx, ses.ID); s.Status != store.SessionInterrupted {
		t.Fatalf("eve's click changed the session: %s", s.Status)
	}

	w.click(ana, root, actionSessionResume, ses.ID)
	w.message(":arrow_forward: Resumed by <@" + ana.ID + ">")
	w.waitMessage(root.TS, "the Resume button gone", func(m fakeslack.Message) bool { return !hasResume(m) })
	if n, _ := w.st.Resumes(w.ctx, ses.ID); n != 1 {
		t.Errorf("%d resumes recorded, want 1", n)
	}
	if s, _ := w.st.Session(w.ctx, ses.ID); s.Status == store.SessionInterrupted {
		t.Errorf("ana's click left the session interrupted: %+v", s)
	}
}

// TestAFirstStartPostsAnInterruptedRunWithItsResumeButton: a run
// interrupted before the service's first start waits for a person's
// Resume, so the first start gives it its thread, with the button.
func TestAFirstStartPostsAnInterruptedRunWithItsResumeButton(t *testing.T) {
	w := newIdleWorld(t, testConfig(), nil, resumeWith("true"))
	ses := interruptedRun(t, w)
	// Not resumable (no run record): history, not posted.
	other, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: supervision.ModeRemote, CLI: "claude", Title: "An MCP session"})
	if err != nil {
		t.Fatal(err)
	}
	interrupt(t, w, other.ID)
	w.start()
	root := w.message("Session 1 ")
	if !strings.Contains(string(root.Last().Blocks), `"action_id":"session_resume"`) {
		t.Fatalf("the interrupted run's thread has no Resume button: %s", root.Last().Blocks)
	}
	w.click(ana, root, actionSessionResume, ses.ID)
	w.message(":arrow_forward: Resumed by <@" + ana.ID + ">")
	for _, m := range w.fake.Messages() {
		if strings.HasPrefix(m.Versions[0].Text, "Session 2 ") {
			t.Fatalf("a session that cannot be resumed was posted: %+v", m)
		}
	}
}

// resumeWith is a world's resumer whose new supervisor is argv.
func resumeWith(argv ...string) func(*workspace.Workspace) supervision.Resumer {
	return func(ws *workspace.Workspace) supervision.Resumer {
		return (&resume.Resumer{WS: ws, SupervisorArgv: argv}).Func()
	}
}

// interruptedRun is a remote session of run T-7-1 (task T-7) whose
// supervisor died: resumable.
func interruptedRun(t *testing.T, w *world) store.Session {
	t.Helper()
	// The resumed run's supervisor logs beside the workspace's store.
	if err := os.MkdirAll(filepath.Join(w.dbDir, ".agent", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	row, err := agentrun.RowOf(&agentrun.Record{RunID: "T-7-1", Caller: agentrun.CallerDispatch, TaskID: "T-7", ApprovalMode: runner.ApprovalAsk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.SaveRun(w.ctx, row); err != nil {
		t.Fatal(err)
	}
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: supervision.ModeRemote, CLI: "claude", TaskID: "T-7", RunID: "T-7-1", Title: "Fix the fetcher"})
	if err != nil {
		t.Fatal(err)
	}
	interrupt(t, w, ses.ID)
	return ses
}

// interrupt makes session id active, then interrupted by its supervisor's death.
func interrupt(t *testing.T, w *world, id int64) {
	t.Helper()
	if _, err := w.st.SetSessionStatus(w.ctx, id, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.SetSessionStatus(w.ctx, id, store.Transition{To: store.SessionInterrupted, By: store.ActorAgentinfra, Surface: store.SurfaceSupervisor,
		Reason: "its supervisor (pid 4242) died while the run went on"}); err != nil {
		t.Fatal(err)
	}
}
