package review

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
)

// coderWorld is a repository on a remote (a bare repository), the
// person's clone of it (the fixture's main checkout, the workspace root
// with the task matrix) and a Coder workspace's clone, where the host's
// agent works in a worktree on agent/NAME, as its local fleet makes it.
type coderWorld struct {
	*fixture
	remote, workspace string
}

func newCoderWorld(t *testing.T) *coderWorld {
	t.Helper()
	f := newFixture(t)
	dir := filepath.Dir(f.root)
	w := &coderWorld{fixture: f, remote: filepath.Join(dir, "origin.git"), workspace: filepath.Join(dir, "coder-ws")}
	f.git(dir, "clone", "-q", "--bare", f.root, w.remote)
	f.git(f.root, "remote", "add", "origin", w.remote)
	f.git(dir, "clone", "-q", w.remote, w.workspace)
	f.git(w.workspace, "config", "user.name", "Coder")
	f.git(w.workspace, "config", "user.email", "coder@example.com")
	return w
}

// agent makes NAME's worktree in the workspace's clone.
func (w *coderWorld) agentThere(name string) string {
	w.t.Helper()
	wt := filepath.Join(filepath.Dir(w.workspace), "coder-ws-agents", name)
	w.git(w.workspace, "worktree", "add", "-q", "-b", "agent/"+name, wt, "main")
	return wt
}

// publishAndRecord is a run's end on Coder: the workspace's host
// publishes the agent's work, this machine records it from the remote.
func (w *coderWorld) publishAndRecord(id, agent, wt, run string) (Published, Change) {
	w.t.Helper()
	ctx := context.Background()
	pub, err := Publish(ctx, PublishInput{Task: id, Subject: "the task", Agent: agent, Run: run, Worktree: wt, Branch: "agent/" + agent, Remote: "origin"})
	if err != nil {
		w.t.Fatalf("publish %s: %v", id, err)
	}
	c, err := w.svc.Record(ctx, RecordInput{Task: id, Agent: agent, Run: run, Worktree: w.root, Branch: "agent/" + agent, BaseBranch: "main", Remote: "origin", Head: pub.Head})
	if err != nil {
		w.t.Fatalf("record %s from the remote: %v", id, err)
	}
	return pub, c
}

// On Coder the same loop: the agent commits some work and leaves some
// uncommitted in its workspace; the host commits it and pushes the branch
// to the remote; this machine fetches it into its clone, where review
// list shows the change and approve lands it on main — the person's
// uncommitted edit in their checkout untouched — and the task is DONE.
func TestACoderChangeIsPushedFetchedAndLanded(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	ctx := context.Background()
	papi := w.agentThere("papi")
	id := w.taskInReview("Add Three", "papi")
	w.write(papi, "three.go", "package util\n\nfunc Three() int { return 3 }\n")
	w.git(papi, "add", "three.go")
	w.git(papi, "commit", "-q", "-m", "Three")
	w.write(papi, "three_test.go", "package util\n") // left uncommitted
	w.write(w.root, "notes.txt", "notes\nmy own edit, not committed\n")
	mine := hashFiles(t, w.root, "notes.txt")

	pub, c := w.publishAndRecord(id, "papi", papi, "papi-1")
	if pub.Committed == "" || w.git(w.remote, "rev-parse", "refs/heads/agent/papi") != pub.Head {
		t.Fatalf("published %+v; the remote's agent/papi is %s", pub, w.git(w.remote, "rev-parse", "refs/heads/agent/papi"))
	}
	if got := w.git(papi, "log", "-1", "--format=%an|%s|%(trailers:key=Agentinfra-Run,valueonly)", pub.Committed); got != "papi|"+id+": the task|papi-1" {
		t.Errorf("the commit of the leftovers: %q", got)
	}
	if c.Remote != "origin" || c.Worktree != "" || c.Head != pub.Head || len(c.Commits) != 2 || c.Base != w.git(w.root, "rev-parse", "main") {
		t.Errorf("the change recorded from the remote: %+v", c)
	}
	items, err := w.svc.List(ctx)
	if err != nil || len(items) != 1 || items[0].Files != 2 || items[0].State() != StateReview {
		t.Fatalf("review list: %+v, %v", items, err)
	}
	var diff strings.Builder
	if err := w.svc.Diff(ctx, id, &diff, DiffOptions{}); err != nil || !strings.Contains(diff.String(), "+func Three() int { return 3 }") {
		t.Errorf("review show's diff: %v\n%s", err, diff.String())
	}
	w.config("review:\n  checks: [\"go vet ./...\"]\n")
	if _, err := w.svc.Check(ctx, id); agenterr.KindOf(err) != agenterr.Refused || !strings.Contains(err.Error(), "Coder workspace") {
		t.Errorf("checks of a change whose worktree is in its workspace: %v; want refused", err)
	}
	if _, err := w.svc.Approve(ctx, id, ApproveOptions{By: "ana"}); !errors.Is(err, ErrChecks) {
		t.Errorf("approve with checks configured that could not run: %v; want ErrChecks", err)
	}

	res, err := w.svc.Approve(ctx, id, ApproveOptions{By: "ana", Force: true})
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if got := w.read(w.root, "three.go"); !strings.Contains(got, "Three") {
		t.Errorf("three.go in the person's checkout after landing: %q", got)
	}
	if got := w.git(w.root, "show", "main:three_test.go"); got != "package util" {
		t.Errorf("the uncommitted leftover on main: %q", got)
	}
	if hashFiles(t, w.root, "notes.txt") != mine || !strings.Contains(w.git(w.root, "status", "--porcelain"), "notes.txt") {
		t.Error("the person's uncommitted edit changed, or was committed")
	}
	if got := w.status(id); got != "DONE" {
		t.Errorf("task is %s, want DONE", got)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "Coder workspace") }) {
		t.Errorf("notes: %q; want one saying the agent's branch is in its workspace", res.Notes)
	}
}

// A change from Coder that conflicts with main is refused as any: the
// files named, main, the change and the person's checkout as they were,
// the task in REVIEW marked conflict; and a local edit of a file the
// change touches refuses the landing naming it.
func TestACoderChangeIsRefusedAsAnyOther(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	ctx := context.Background()
	zed := w.agentThere("zed")
	id := w.taskInReview("Make One return 10", "zed")
	w.write(zed, "util.go", strings.Replace(w.read(zed, "util.go"), "return 1", "return 10", 1))
	w.write(zed, "notes.txt", "notes\nby zed\n")
	_, c := w.publishAndRecord(id, "zed", zed, "zed-1")
	w.write(w.root, "notes.txt", "notes\nmy own edit\n")
	files := []string{"util.go", "notes.txt"}

	mainBefore, checkout := w.git(w.root, "rev-parse", "main"), hashFiles(t, w.root, files...)
	if _, err := w.svc.Approve(ctx, id, ApproveOptions{By: "ana"}); !errors.Is(err, ErrLocalChanges) || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("approve over the person's edit of notes.txt: %v; want ErrLocalChanges naming it", err)
	}
	if w.git(w.root, "rev-parse", "main") != mainBefore || hashFiles(t, w.root, files...) != checkout {
		t.Error("a refused landing moved main or changed files")
	}
	w.git(w.root, "checkout", "-q", "--", "notes.txt")

	// Meanwhile the person changes the same line on main.
	w.write(w.root, "util.go", strings.Replace(w.read(w.root, "util.go"), "return 1", "return 100", 1))
	w.git(w.root, "commit", "-q", "-am", "One is 100")
	mainBefore, checkout = w.git(w.root, "rev-parse", "main"), hashFiles(t, w.root, files...)
	_, err := w.svc.Approve(ctx, id, ApproveOptions{By: "ana"})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "util.go") {
		t.Fatalf("approve of a conflicting change: %v; want ErrConflict naming util.go", err)
	}
	if w.git(w.root, "rev-parse", "main") != mainBefore || w.git(w.root, "rev-parse", PinPrefix+id) != c.Head || w.git(w.remote, "rev-parse", "agent/zed") != c.Head {
		t.Error("a refused landing moved main, the change or the remote's branch")
	}
	if hashFiles(t, w.root, files...) != checkout {
		t.Error("a refused landing changed files")
	}
	items, _ := w.svc.List(ctx)
	if got := w.status(id); got != "REVIEW" || len(items) != 1 || items[0].State() != StateConflict || !slices.Equal(items[0].Change.Conflict, []string{"util.go"}) {
		t.Errorf("task %s, list %+v; want REVIEW, marked conflict in util.go", got, items)
	}
}

// A record that finds the remote's branch elsewhere than the workspace
// published (pushed again since) is refused; a remote that does not
// answer is named.
func TestACoderChangeMustBeTheOnePublished(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	ctx := context.Background()
	papi := w.agentThere("papi")
	id := w.taskInReview("Add Three", "papi")
	w.write(papi, "three.go", "package util\n")
	pub, err := Publish(ctx, PublishInput{Task: id, Subject: "Add Three", Agent: "papi", Worktree: papi, Branch: "agent/papi", Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	in := RecordInput{Task: id, Agent: "papi", Worktree: w.root, Branch: "agent/papi", BaseBranch: "main", Remote: "origin", Head: pub.Head}
	if _, err := w.svc.Record(ctx, in); err != nil {
		t.Fatal(err)
	}
	pinned := w.git(w.root, "rev-parse", PinPrefix+id)
	// The workspace pushes again: a record of what it published before is
	// refused, and the pin — the only ref here with the change in review —
	// stays where it was.
	w.write(papi, "four.go", "package util\n")
	if _, err := Publish(ctx, PublishInput{Task: id, Subject: "Add Three", Agent: "papi", Worktree: papi, Branch: "agent/papi", Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Record(ctx, in); agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "pushed again") {
		t.Errorf("record of another commit than the remote's: %v", err)
	}
	if got := w.git(w.root, "rev-parse", PinPrefix+id); got != pinned {
		t.Errorf("the refused record moved the change's pin from %s to %s", pinned, got)
	}
	if left := w.git(w.root, "for-each-ref", fetchPrefix); left != "" {
		t.Errorf("a fetched ref was left: %s", left)
	}
	in.Head, in.Remote = pub.Head, filepath.Join(t.TempDir(), "gone.git")
	if _, err := w.svc.Record(ctx, in); agenterr.KindOf(err) != agenterr.Unavailable || !strings.Contains(err.Error(), "could not be fetched") {
		t.Errorf("record from a remote that is not there: %v", err)
	}
}
