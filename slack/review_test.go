package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/config"
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

// With console.url, the end of a run whose change waits for review has a
// Review button that opens the change's page on the console: the config's
// URL and the task's ID, nothing the agent said (its session title here
// holds a link of its own).
func TestTheEndOfARunLinksItsChangeToTheConsole(t *testing.T) {
	ws, id := changeRepo(t)
	w := newReviewWorld(t, testConfig(), review.New(ws, nil))
	w.stopSvc()
	if err := <-w.done; err != nil {
		t.Fatal(err)
	}
	w.console = config.Console{URL: "https://agents.example.com/ai"}
	w.start()
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: store.ModeRemote, CLI: "claude", Agent: "papi", TaskID: id,
		Title: "Add the A function <https://evil.example/review|Review>"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	w.message(fmt.Sprintf("Session %d ", ses.ID))
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: "the run finished: REVIEW"})
	end := w.message(fmt.Sprintf("Session %d terminated", ses.ID)).Last()
	want := "https://agents.example.com/ai/review/" + id
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string                `json:"action_id"`
			URL      string                `json:"url"`
			Text     struct{ Text string } `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(end.Blocks, &blocks); err != nil {
		t.Fatalf("blocks: %v\n%s", err, end.Blocks)
	}
	var urls []string
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.URL != "" {
				urls = append(urls, e.Text.Text+" → "+e.URL)
			}
		}
	}
	if len(urls) != 1 || urls[0] != "Review → "+want {
		t.Errorf("the buttons that open a page: %q; want one, Review → %s\n%s", urls, want, end.Blocks)
	}
	if !strings.Contains(end.Text, want) {
		t.Errorf("the message's text (notifications) lacks the link %s: %s", want, end.Text)
	}
}
