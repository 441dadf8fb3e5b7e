package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
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
	papi, id := w.papiAddsThree()
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

// papiAddsThree is papi's worktree in the workspace with three.go
// written, uncommitted, for task "Add Three" in REVIEW.
func (w *coderWorld) papiAddsThree() (wt, id string) {
	w.t.Helper()
	wt = w.agentThere("papi")
	id = w.taskInReview("Add Three", "papi")
	w.write(wt, "three.go", "package util\n")
	return wt, id
}

// publish is the workspace's host publishing agent's change of task id.
func (w *coderWorld) publish(id, agent, wt string) (Published, error) {
	return Publish(context.Background(), PublishInput{Task: id, Subject: "the task", Agent: agent, Run: agent + "-1", Worktree: wt, Branch: "agent/" + agent, Remote: "origin"})
}

// personPushes is a person committing file on branch in their own clone
// of the remote — on top of the remote branch, or from main when there is
// none — and pushing it as people do (no force); it returns the commit.
func (w *coderWorld) personPushes(branch, file string) string {
	w.t.Helper()
	clone := filepath.Join(filepath.Dir(w.remote), "person-clone")
	if _, err := os.Stat(clone); err != nil {
		w.git(filepath.Dir(clone), "clone", "-q", w.remote, clone)
		w.git(clone, "config", "user.name", "Bo Person")
		w.git(clone, "config", "user.email", "bo@example.com")
	}
	w.git(clone, "fetch", "-q", "--prune", "origin")
	from := "origin/main"
	if w.git(clone, "ls-remote", "origin", "refs/heads/"+branch) != "" {
		from = "origin/" + branch
	}
	w.git(clone, "checkout", "-q", "-B", branch, from)
	w.write(clone, file, "the person's "+file+"\n")
	w.git(clone, "add", file)
	w.git(clone, "commit", "-q", "-m", "the person's "+file)
	w.git(clone, "push", "-q", "origin", branch)
	return w.git(clone, "rev-parse", "HEAD")
}

// refusedOver checks a publish refused over the person's commit mine on
// branch: a conflict naming it, the remote branch still at it, and the
// agent's change committed on its branch in the workspace (nothing lost).
func (w *coderWorld) refusedOver(err error, branch, mine, wt string) {
	w.t.Helper()
	if agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "did not push ("+mine[:7]) || !strings.Contains(err.Error(), "branch_prefix") {
		w.t.Errorf("publish over the person's commit on %s: %v; want a conflict naming %s and saying what to do", branch, err, mine[:7])
	}
	if got := w.git(w.remote, "rev-parse", "refs/heads/"+branch); got != mine {
		w.t.Errorf("the remote's %s is %s: the person's commit %s was overwritten", branch, got, mine)
	}
	if st := w.git(wt, "status", "--porcelain"); st != "" {
		w.t.Errorf("the agent's work is not committed in its worktree after the refused publish:\n%s", st)
	}
}

// A branch a person pushes to is never overwritten by a publish: neither
// one that was theirs before the agent's first publish (a fleet
// branch_prefix naming their branches), nor the agent's own branch once
// a person pushed on it. The publish is refused, the agent's change stays
// committed in the workspace, and publishes once the person's branch is
// out of the way.
func TestACoderPublishNeverOverwritesAPersonsCommits(t *testing.T) {
	e2etools.E2EOnly(t, "TestACoderPublishAfterALandingStartsAgainFromTheBase and TestACoderPublishRemakesABranchAPersonDeleted refuse a publish over a person's pushed commit")
	t.Parallel()
	w := newCoderWorld(t)

	theirs := w.personPushes("agent/zed", "plan.txt")
	zed := w.agentThere("zed")
	zid := w.taskInReview("Make One return 10", "zed")
	w.write(zed, "util.go", strings.Replace(w.read(zed, "util.go"), "return 1", "return 10", 1))
	_, err := w.publish(zid, "zed", zed)
	w.refusedOver(err, "agent/zed", theirs, zed)
	if got := w.git(zed, "show", "agent/zed:util.go"); !strings.Contains(got, "return 10") {
		t.Errorf("the agent's change on its branch after the refused publish: %q", got)
	}

	papi, pid := w.papiAddsThree()
	if _, err := w.publish(pid, "papi", papi); err != nil {
		t.Fatal(err)
	}
	onTop := w.personPushes("agent/papi", "review-notes.txt")
	w.write(papi, "four.go", "package util\n")
	_, err = w.publish(pid, "papi", papi)
	w.refusedOver(err, "agent/papi", onTop, papi)

	// The person removes their branch: the change, kept, publishes.
	w.git(w.remote, "update-ref", "-d", "refs/heads/agent/zed", theirs)
	pub, err := w.publish(zid, "zed", zed)
	if err != nil || w.git(w.remote, "rev-parse", "refs/heads/agent/zed") != pub.Head || !strings.Contains(w.git(w.remote, "show", pub.Head+":util.go"), "return 10") {
		t.Errorf("publish once the person's branch is gone: %+v, %v", pub, err)
	}
}

// After a landing the agent's branch starts again from the base: its
// next publish is not a fast-forward of its last and goes — and a
// person's commit pushed on it afterwards is still refused.
func TestACoderPublishAfterALandingStartsAgainFromTheBase(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	ctx := context.Background()
	papi, id := w.papiAddsThree()
	first, _ := w.publishAndRecord(id, "papi", papi, "papi-1")
	if _, err := w.svc.Approve(ctx, id, ApproveOptions{By: "ana"}); err != nil {
		t.Fatal(err)
	}

	w.git(papi, "checkout", "-q", "-B", "agent/papi", "main")
	next := w.taskInReview("Add Four", "papi")
	w.write(papi, "four.go", "package util\n")
	pub, _ := w.publishAndRecord(next, "papi", papi, "papi-2")
	if w.git(w.remote, "rev-parse", "refs/heads/agent/papi") != pub.Head {
		t.Fatalf("the remote's agent/papi is not at the change published after the landing %s", pub.Head)
	}
	if w.git(w.remote, "merge-base", first.Head, pub.Head) == first.Head {
		t.Fatal("the second publish is a fast-forward of the first: the branch did not start again from the base")
	}

	mine := w.personPushes("agent/papi", "review-notes.txt")
	w.write(papi, "five.go", "package util\n")
	_, err := w.publish(next, "papi", papi)
	w.refusedOver(err, "agent/papi", mine, papi)
}

// A person deletes the agent's branch on the remote after the landing
// (as GitHub's "delete branch" does) while the workspace's clone still
// tracks it: the next publish makes it again — and a person's commit
// pushed on it afterwards is still refused.
func TestACoderPublishRemakesABranchAPersonDeleted(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	papi, id := w.papiAddsThree()
	if _, err := w.publish(id, "papi", papi); err != nil {
		t.Fatal(err)
	}
	w.git(w.remote, "branch", "-D", "agent/papi")
	if w.git(w.workspace, "for-each-ref", "refs/remotes/origin/agent/papi") == "" {
		t.Fatal("the workspace's clone does not track agent/papi: the deleted branch is not the case tested")
	}

	w.write(papi, "four.go", "package util\n")
	pub, err := w.publish(id, "papi", papi)
	if err != nil || w.git(w.remote, "rev-parse", "refs/heads/agent/papi") != pub.Head {
		t.Fatalf("publish after the remote branch was deleted: %+v, %v", pub, err)
	}

	mine := w.personPushes("agent/papi", "review-notes.txt")
	w.write(papi, "five.go", "package util\n")
	_, err = w.publish(id, "papi", papi)
	w.refusedOver(err, "agent/papi", mine, papi)
}

// A push the remote refuses for its own reasons (a hook there) is not a
// person's commits in the way: it is said as the remote's refusal, with
// git's words and how to push by hand.
func TestACoderPublishRefusedByTheRemoteSaysSo(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)
	papi, id := w.papiAddsThree()
	first, err := w.publish(id, "papi", papi)
	if err != nil {
		t.Fatal(err)
	}
	w.write(papi, "four.go", "package util\n")
	w.write(w.remote, "hooks/pre-receive", "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
	if err := os.Chmod(filepath.Join(w.remote, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = w.publish(id, "papi", papi)
	if agenterr.KindOf(err) != agenterr.Unavailable || !strings.Contains(err.Error(), "pushes are closed today") || !strings.Contains(err.Error(), "git push origin agent/papi") {
		t.Errorf("publish refused by the remote's hook: %v; want unavailable with the remote's words", err)
	}
	if got := w.git(w.remote, "rev-parse", "refs/heads/agent/papi"); got != first.Head {
		t.Errorf("the remote's agent/papi moved to %s", got)
	}
}

// The lease is what the workspace pushed, never what it fetched: a clone
// made after a person pushed their branch (or any `git fetch` in the
// workspace — the agent's, an editor's) tracks the person's commit, and a
// lease on the tracking ref let the publish overwrite it. A publish of
// this clone's own earlier change still goes when the ref that remembers
// it is missing (an earlier version kept none): the change's pin says it
// was published here.
func TestACoderPublishLeasesOnWhatItPushedNotOnWhatItFetched(t *testing.T) {
	t.Parallel()
	w := newCoderWorld(t)

	// The person's branch, seen by the workspace as a clone made later sees it.
	theirs := w.personPushes("agent/zed", "plan.txt")
	w.git(w.workspace, "fetch", "-q", "origin")
	zed := w.agentThere("zed")
	zid := w.taskInReview("Make One return 10", "zed")
	w.write(zed, "util.go", strings.Replace(w.read(zed, "util.go"), "return 1", "return 10", 1))
	_, err := w.publish(zid, "zed", zed)
	w.refusedOver(err, "agent/zed", theirs, zed)

	// The agent's branch, a person's commit on it, fetched by the
	// workspace, then the agent's branch started again from main.
	papi, pid := w.papiAddsThree()
	if _, err := w.publish(pid, "papi", papi); err != nil {
		t.Fatal(err)
	}
	onTop := w.personPushes("agent/papi", "review-notes.txt")
	w.git(w.workspace, "fetch", "-q", "origin")
	w.git(papi, "checkout", "-q", "-B", "agent/papi", "main")
	w.write(papi, "four.go", "package util\n")
	_, err = w.publish(pid, "papi", papi)
	w.refusedOver(err, "agent/papi", onTop, papi)

	// This clone's own change, its published ref gone: the pin vouches.
	w.git(w.remote, "update-ref", "-d", "refs/heads/agent/papi", onTop)
	pub, err := w.publish(pid, "papi", papi)
	if err != nil {
		t.Fatal(err)
	}
	w.git(w.workspace, "update-ref", "-d", PublishedPrefix+"agent/papi")
	w.git(papi, "checkout", "-q", "-B", "agent/papi", "main") // the next task, as after a landing
	next := w.taskInReview("Add Five", "papi")
	w.write(papi, "five.go", "package util\n")
	again, err := w.publish(next, "papi", papi)
	if err != nil || w.git(w.remote, "rev-parse", "refs/heads/agent/papi") != again.Head || again.Head == pub.Head {
		t.Errorf("a publish over this clone's own earlier change (no published ref): %+v, %v", again, err)
	}
}
