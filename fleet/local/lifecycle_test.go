package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// A deleted agent's name can be used again: delete keeps its branch's work
// under an archive name and says which; a new agent of that name starts
// afresh on agent/NAME. A branch agent/NAME that an earlier version kept at
// delete is archived by the next create of NAME; one no deleted agent left
// is still refused (issue 20).
func TestDeletedAgentsNameIsFreeAndItsWorkKept(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	a, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	fakeWork := filepath.Join(a.Workspace.Path, "work.go")
	if err := os.WriteFile(fakeWork, []byte("package main // papi's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, a.Workspace.Path, "git", "add", "work.go")
	run(t, a.Workspace.Path, "git", "commit", "-q", "-m", "papi's work")
	work := run(t, ws.Root, "git", "rev-parse", "agent/papi")

	d, err := f.Delete(ctx, "papi", false)
	if err != nil {
		t.Fatal(err)
	}
	res := fleet.NewDeleteResult(d)
	if !strings.HasPrefix(d.ArchivedBranch, "agent/papi-archived-") || !strings.Contains(res.Message, "kept as "+d.ArchivedBranch) ||
		res.DeletedAgent.ArchivedBranch != d.ArchivedBranch {
		t.Fatalf("delete result %+v", res)
	}
	if got := run(t, ws.Root, "git", "rev-parse", d.ArchivedBranch); got != work {
		t.Fatalf("the archived branch is at %s, papi's work at %s", got, work)
	}
	again, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "start afresh"})
	if err != nil {
		t.Fatalf("the name of a deleted agent is not free: %v", err)
	}
	if again.Workspace.Branch != "agent/papi" || run(t, ws.Root, "git", "rev-parse", "agent/papi") == work {
		t.Fatalf("the new papi is on %s, at papi's old work", again.Workspace.Branch)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	// The second delete of the name in the same second gets its own name.
	d2, err := f.Delete(ctx, "papi", false)
	if err != nil || d2.ArchivedBranch == d.ArchivedBranch || d2.ArchivedBranch == "" {
		t.Fatalf("second delete: %+v, %v (first kept %s)", d2, err, d.ArchivedBranch)
	}

	// A branch an earlier version kept: what deleted agent old left.
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "old", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "old", fleet.StatusIdle)
	od, err := f.Delete(ctx, "old", false)
	if err != nil {
		t.Fatal(err)
	}
	run(t, ws.Root, "git", "branch", "-m", od.ArchivedBranch, "agent/old")
	nctx, notes := fleet.WithNotices(ctx)
	if _, err := f.Create(nctx, fleet.CreateInput{Name: "old", Spec: "s"}); err != nil {
		t.Fatalf("create over an old version's kept branch: %v", err)
	}
	if txt := strings.Join(notes.Texts(), "\n"); !strings.Contains(txt, "the branch agent/old of the deleted agent old is kept as agent/old-archived-") {
		t.Errorf("notices %q", txt)
	}
	waitStatus(t, f, "old", fleet.StatusIdle)

	// A branch no deleted agent left is someone's: refused.
	run(t, ws.Root, "git", "branch", "agent/stray")
	_, err = f.Create(ctx, fleet.CreateInput{Name: "stray", Spec: "s"})
	wantCode(t, err, fleet.CodeConflict, "name")
	if !strings.Contains(err.Error(), "already exists") {
		t.Errorf("error %q", err)
	}
}

// Starting an agent on a BLOCKED task by its ID reopens it through the task
// lifecycle (BLOCKED → TODO, logged with who and why) and claims it; --next
// never takes a BLOCKED task (issue 20).
func TestStartOnABlockedTaskReopensIt(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	if _, _, err := tasksvc.ScaffoldTask(ctx, ws, "c3c3c3", tasksvc.ScaffoldOptions{}, f.now()); err != nil { // its README keeps the status log
		t.Fatal(err)
	}
	if _, err := tasksvc.Block(ctx, ws, "c3c3c3", "the build is red", "alice", f.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", Next: true}); err != nil {
		t.Fatal(err)
	}
	if tk := taskOf(t, ws, "c3c3c3"); tk.Status != "BLOCKED" {
		t.Fatalf("--next took the BLOCKED task: %s", tk.Status)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)

	actx, notes := fleet.WithNotices(tasksvc.WithActor(ctx, "bob"))
	res, err := fleet.StartAgent(actx, f, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.TaskID != "c3c3c3" || res.Task.Status != fleet.RunRunning && res.Task.CompletedAt == nil {
		t.Fatalf("start result %+v", res)
	}
	if txt := strings.Join(notes.Texts(), "\n"); !strings.Contains(txt, "task c3c3c3 was BLOCKED: reopened (TODO) by bob to start agent papi on it") {
		t.Errorf("notices %q", txt)
	}
	dir, _ := ws.FindTaskDir("c3c3c3")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "BLOCKED → TODO by @bob: reopened to start agent @papi on it") || !strings.Contains(string(readme), "TODO → IN_PROGRESS") {
		t.Errorf("the status log does not show the reopen and the claim:\n%s", readme)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	if tk := taskOf(t, ws, "c3c3c3"); tk.Status != "REVIEW" {
		t.Errorf("after the run the task is %s", tk.Status)
	}
}

func taskOf(t testing.TB, ws interface{ MatrixPath() string }, id string) matrix.Task {
	t.Helper()
	tk, ok := loadDoc(t, ws).Task(id)
	if !ok {
		t.Fatalf("no task %s", id)
	}
	return tk
}
