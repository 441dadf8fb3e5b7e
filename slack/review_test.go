package slack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// changeRepo is a git repository with one task in REVIEW whose change
// papi left in its worktree (a.go, 3 lines), recorded as the fleet's run
// end records it.
func changeRepo(t *testing.T) (*workspace.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	root, wt := filepath.Join(dir, "repo"), filepath.Join(dir, "papi")
	os.MkdirAll(root, 0o755)
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "Ana")
	git("config", "user.email", "ana@example.com")
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: "Add the A function"}, now)
	if err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	git("worktree", "add", "-q", "-b", "agent/papi", wt, "main")
	id := c.Task.ID
	if _, err := task.Claim(ctx, ws, id, "papi", now); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Finish(ctx, ws, id, task.FinishOptions{OK: true}, "@papi", now); err != nil {
		t.Fatal(err)
	}
	if _, err := review.New(ws, nil).Record(ctx, review.RecordInput{Task: id, Agent: "papi", Run: "papi-1", Worktree: wt, Branch: "agent/papi", BaseBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	return ws, id
}

// The end of a session whose task's change waits in review says so in
// its thread, with the change's size and checks; a session whose task has
// none ends as before.
func TestTheEndOfARunSaysItsChangeWaitsForReview(t *testing.T) {
	ws, id := changeRepo(t)
	w := newReviewWorld(t, testConfig(), review.New(ws, nil))
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: store.ModeRemote, CLI: "claude", Agent: "papi", TaskID: id, Title: "Add the A function"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	other := w.session(store.ModeRemote) // task T-7: no change
	w.message(fmt.Sprintf("Session %d ", ses.ID))
	w.message(fmt.Sprintf("Session %d ", other.ID))
	for _, s := range []store.Session{ses, other} {
		w.st.SetSessionStatus(w.ctx, s.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: "the run finished: REVIEW"})
	}
	end := w.message(fmt.Sprintf("Session %d terminated", ses.ID))
	want := fmt.Sprintf("Task %s's change waits for review*: 1 file, +3 −0, checks none. Review it: `agentinfra review show %s`", id, id)
	if !strings.Contains(end.Last().Text, want) || !strings.Contains(string(end.Last().Blocks), want) {
		t.Errorf("the end of the run on %s:\n%s\n%s", id, end.Last().Text, end.Last().Blocks)
	}
	if end := w.message(fmt.Sprintf("Session %d terminated", other.ID)); strings.Contains(end.Last().Text, "review") {
		t.Errorf("a session of a task without a change: %s", end.Last().Text)
	}
}
