package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/task"
)

// review changes keeps every comment with the task (the README's Review
// section, with file and line), moves the task back to IN_PROGRESS by the
// reviewer, and the prompt the agent gets carries every comment with its
// file and line; recording the agent's next work starts round 2 with the
// comments kept.
func TestRequestChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi := f.agent("papi")
	id := f.taskInReview("Add the A function", "papi")
	f.write(papi, "a.go", "package util\n\nfunc A() {}\n")
	f.record(id, "papi", papi)

	comments := []CommentInput{
		{File: "a.go", Line: 3, Text: "A must return an error"},
		{File: "./a.go", Text: "add a doc comment"},
		{Text: "the tests do not cover A\nadd one"},
	}
	res, err := f.svc.RequestChanges(ctx, id, comments, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.status(id); got != "IN_PROGRESS" {
		t.Errorf("task is %s after review changes, want IN_PROGRESS", got)
	}
	if h := task.Holder(res.Task); h != "@papi" {
		t.Errorf("holder %q, want @papi", h)
	}
	readme := f.readme(id)
	for _, want := range []string{"## Review", "changes requested (round 1) by @ana:", "- `a.go:3`: A must return an error", "- `a.go`: add a doc comment", "- the tests do not cover A\n    add one", "status REVIEW → IN_PROGRESS by @ana: changes requested"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	for _, want := range []string{"1. a.go:3: A must return an error", "2. a.go: add a doc comment", "3. the whole change: the tests do not cover A\n   add one", "agent/papi", "by @ana"} {
		if !strings.Contains(res.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, res.Prompt)
		}
	}
	if res.Change.State != StateChanges || len(res.Change.Comments) != 3 {
		t.Errorf("change after the request: %+v", res.Change)
	}
	// A second request of a change that is not in review is refused.
	if _, err := f.svc.RequestChanges(ctx, id, comments[:1], "ana"); !errors.Is(err, task.ErrNotInReview) {
		t.Errorf("second request: %v, want ErrNotInReview", err)
	}

	// The agent works on it again, on its own change.
	start, err := f.svc.PrepareBranch(ctx, BranchInput{Worktree: papi, Branch: "agent/papi", BaseBranch: "main", Task: id})
	if err != nil || start != res.Change.Head {
		t.Fatalf("prepare for the sent-back task: %s, %v; want the change's head %s", start, err, res.Change.Head)
	}
	f.write(papi, "a.go", "package util\n\n// A is A.\nfunc A() error { return nil }\n")
	if _, err := task.Finish(ctx, f.ws, id, task.FinishOptions{OK: true, Holder: "@papi"}, "@papi", clock); err != nil {
		t.Fatal(err)
	}
	// Recorded as the fleet records it: from where the run started (the
	// previous round's head). The change is still the whole work since
	// its base, both rounds' commits.
	c, err := f.svc.Record(ctx, RecordInput{Task: id, Agent: "papi", Run: "papi-2", Worktree: papi, Branch: "agent/papi", BaseBranch: "main", Start: start, Summary: "did " + id})
	if err != nil {
		t.Fatal(err)
	}
	if c.Round != 2 || len(c.Comments) != 3 || c.State != StateReview || len(c.Commits) != 2 || c.Base != res.Change.Base {
		t.Errorf("round 2: round %d, %d comments, state %s, %d commits, base %s (round 1's %s)", c.Round, len(c.Comments), c.State, len(c.Commits), c.Base, res.Change.Base)
	}
	d, err := f.svc.Show(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Review) != 3 || !strings.Contains(d.Review[2], "change recorded (round 2)") || d.Change.Summary != "did "+id {
		t.Errorf("show: review %q, summary %q", d.Review, d.Change.Summary)
	}
}

// A bad comment is refused and nothing is written.
func TestRequestChangesRefusesBadComments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi := f.agent("papi")
	id := f.taskInReview("Add the A function", "papi")
	f.write(papi, "a.go", "package util\n")
	f.record(id, "papi", papi)
	readme := f.readme(id)
	for _, bad := range [][]CommentInput{
		nil,
		{{Text: "  "}},
		{{File: "../etc/passwd", Text: "x"}},
		{{File: "/etc/passwd", Text: "x"}},
		{{Line: 3, Text: "a line of no file"}},
		{{File: "a.go", Line: -1, Text: "x"}},
	} {
		_, err := f.svc.RequestChanges(ctx, id, bad, "ana")
		if agenterr.KindOf(err) != agenterr.Invalid {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
	if f.readme(id) != readme || f.status(id) != "REVIEW" {
		t.Error("a refused request changed the task")
	}
}

// Checks run in the agent's worktree without a shell; failing ones block
// approve, force lands it anyway; a change recorded again must be checked
// again; a check past its timeout is killed, with what it started.
func TestChecksGateApprove(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.config("review:\n  checks: [\"test -f a.go\", \"test -f 'ok file.txt'\"]\n")
	papi := f.agent("papi")
	id := f.taskInReview("Add the A function", "papi")
	f.write(papi, "a.go", "package util\n")
	f.record(id, "papi", papi)

	_, err := f.svc.Approve(ctx, id, ApproveOptions{})
	if !errors.Is(err, ErrChecks) || !strings.Contains(err.Error(), "have not run") {
		t.Fatalf("approve before the checks ran: %v", err)
	}
	run, err := f.svc.Check(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Passed || !run.Results[0].Passed || run.Results[1].Passed || run.Results[1].ExitCode != 1 {
		t.Fatalf("checks: %+v; want the first to pass, the second to fail with 1", run)
	}
	items, _ := f.svc.List(ctx)
	if len(items) != 1 || items[0].Checks != ChecksFailed {
		t.Errorf("list shows checks %q, want failed", items[0].Checks)
	}
	mainBefore := f.git(f.root, "rev-parse", "main")
	if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); !errors.Is(err, ErrChecks) || !strings.Contains(err.Error(), "test -f 'ok file.txt' (exit code 1)") {
		t.Fatalf("approve with a failing check: %v", err)
	}
	if f.git(f.root, "rev-parse", "main") != mainBefore || f.status(id) != "REVIEW" {
		t.Fatal("a refused approve changed main or the task")
	}

	// The agent fixes it: recorded again, the checks must run again.
	f.write(papi, "ok file.txt", "ok\n")
	f.record(id, "papi", papi)
	if items, _ := f.svc.List(ctx); items[0].Checks != ChecksNotRun {
		t.Errorf("checks after a new recording: %q, want not run", items[0].Checks)
	}
	if run, err := f.svc.Check(ctx, id); err != nil || !run.Passed {
		t.Fatalf("checks of the fixed change: %+v, %v", run, err)
	}
	if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); err != nil {
		t.Fatalf("approve with passing checks: %v", err)
	}

	// Forced: a failing change lands, and says so.
	id2 := f.taskInReview("Break it", "papi")
	f.write(papi, "a.go", "package util // broken\n")
	if err := os.Remove(filepath.Join(papi, "ok file.txt")); err != nil {
		t.Fatal(err)
	}
	f.record(id2, "papi", papi)
	if _, err := f.svc.Check(ctx, id2); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Approve(ctx, id2, ApproveOptions{Force: true, By: "ana"})
	if err != nil || !res.Change.Landed.Forced || f.status(id2) != "DONE" {
		t.Fatalf("forced approve: %+v, %v", res.Change.Landed, err)
	}
	if !strings.Contains(f.readme(id2), "its checks had not passed (forced)") {
		t.Errorf("README does not say the landing was forced:\n%s", f.readme(id2))
	}
}

// A check past its timeout is killed, and so is what it started, even in
// a session of its own; a failing check's output is kept.
func TestCheckTimeoutKillsItsProcesses(t *testing.T) {
	f := newFixture(t)
	wt := f.agent("papi")
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(envSpawn, pidFile)
	r := runCheck(context.Background(), wt, "spawner", []string{os.Args[0]}, 2*time.Second)
	if !r.TimedOut || r.Passed {
		t.Fatalf("a check past its timeout: %+v", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the check did not start its process: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("the process the check started (pid %d) outlived it: %s", pid, st)
	}
	os.Unsetenv(envSpawn)

	r = runCheck(context.Background(), wt, "ls no-such-file", []string{"ls", "no-such-file"}, time.Minute)
	if r.Passed || r.ExitCode == 0 || !strings.Contains(r.Output, "no-such-file") {
		t.Errorf("a failing check: %+v; want its exit code and output", r)
	}
	// A command line only a shell could run is refused before anything runs.
	f.config("review:\n  checks: [\"go test ./... | tee log\"]\n")
	id := f.taskInReview("A", "papi")
	f.write(wt, "a.go", "package util\n")
	f.record(id, "papi", wt)
	if _, err := f.svc.Check(context.Background(), id); agenterr.KindOf(err) != agenterr.Invalid || !strings.Contains(err.Error(), "one plain command") {
		t.Errorf("a piped check: %v", err)
	}
}

// The next task starts from the current base; nothing uncommitted nor
// unrecorded is ever moved away.
func TestPrepareBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	papi := f.agent("papi")
	in := BranchInput{Worktree: papi, Branch: "agent/papi", BaseBranch: "main"}

	// Uncommitted work that no change records: refused, naming it.
	f.write(papi, "wip.go", "package util\n")
	if _, err := f.svc.PrepareBranch(ctx, in); agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "wip.go") {
		t.Fatalf("prepare over uncommitted work: %v", err)
	}
	// Committed work that no change records and main lacks: refused.
	f.git(papi, "add", "wip.go")
	f.git(papi, "commit", "-q", "-m", "wip")
	if _, err := f.svc.PrepareBranch(ctx, in); agenterr.KindOf(err) != agenterr.Conflict || !strings.Contains(err.Error(), "wip") {
		t.Fatalf("prepare over unrecorded commits: %v", err)
	}
	if f.read(papi, "wip.go") == "" {
		t.Fatal("the work is gone")
	}
	// Recorded as a task's change: the branch may move, the change is
	// pinned, and the next task starts from main.
	id := f.taskInReview("WIP", "papi")
	c := f.record(id, "papi", papi)
	f.write(f.root, "m.go", "package util\n")
	f.git(f.root, "add", "m.go")
	f.git(f.root, "commit", "-q", "-m", "main moves")
	start, err := f.svc.PrepareBranch(ctx, in)
	if main := f.git(f.root, "rev-parse", "main"); err != nil || start != main || f.git(papi, "rev-parse", "HEAD") != main {
		t.Fatalf("prepare after recording: %s, %v; want main %s", start, err, main)
	}
	if _, err := os.Stat(filepath.Join(papi, "wip.go")); !os.IsNotExist(err) {
		t.Error("the other task's file is still in the worktree")
	}
	if _, err := os.Stat(filepath.Join(papi, "m.go")); err != nil {
		t.Error("the worktree is not at main's files")
	}
	// The recorded change still lands, from its pin.
	if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if f.read(f.root, "wip.go") != "package util\n" {
		t.Error("the pinned change did not land")
	}
	// The agent has moved on: its branch is left as it is.
	if got := f.git(f.root, "rev-parse", "agent/papi"); got != start {
		t.Errorf("agent/papi moved to %s though it had moved on from the change %s", got, c.Head)
	}
}

// A check is a command an agent may have written: it runs without
// agentinfra's credentials, without the workspace root or git variables
// that would point it elsewhere, and with the person's own variables.
func TestCheckEnvironment(t *testing.T) {
	f := newFixture(t)
	wt := f.agent("papi")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("AGENTINFRA_API_TOKEN", "tok")
	t.Setenv("AGENTINFRA_ROOT", f.root)
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("KEEP_ME", "kept")
	r := runCheck(context.Background(), wt, "env", []string{"env"}, time.Minute)
	if !r.Passed {
		t.Fatalf("env: %+v", r)
	}
	env := map[string]string{}
	for _, l := range strings.Split(r.Output, "\n") {
		k, v, _ := strings.Cut(l, "=")
		env[k] = v
	}
	for _, k := range []string{"SLACK_BOT_TOKEN", "AGENTINFRA_API_TOKEN", "AGENTINFRA_ROOT", "GIT_DIR"} {
		if v, ok := env[k]; ok {
			t.Errorf("the check got %s=%s", k, v)
		}
	}
	if env["KEEP_ME"] != "kept" || env["PATH"] == "" || env["AGENTINFRA_RUN"] == "" {
		t.Errorf("the check lacks KEEP_ME (%q), PATH or its scope's mark (%q)", env["KEEP_ME"], env["AGENTINFRA_RUN"])
	}
}
