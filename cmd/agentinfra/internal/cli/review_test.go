package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// reviewRepo is a git repository with an initialized .agent/, a task in
// REVIEW whose agent papi left a.go (uncommitted) in its worktree, the
// change recorded as the fleet's run end records it. It returns the
// repository, the task and the worktree.
func reviewRepo(t *testing.T, config string) (root, id, wt string) {
	t.Helper()
	dir := t.TempDir()
	root, wt = filepath.Join(dir, "repo"), filepath.Join(dir, "agents", "papi")
	git := func(d string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", d}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(root, "init", "-q", "-b", "main")
	git(root, "config", "user.name", "Ana Person")
	git(root, "config", "user.email", "ana@example.com")
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(root, "add", "-A")
	git(root, "commit", "-q", "-m", "init")
	git(root, "worktree", "add", "-q", "-b", "agent/papi", wt, "main")
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: "Add the A function"}, taskNow)
	if err != nil {
		t.Fatal(err)
	}
	id = c.Task.ID
	if _, err := task.Claim(ctx, ws, id, "papi", taskNow); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Finish(ctx, ws, id, task.FinishOptions{OK: true, Holder: "@papi"}, "@papi", taskNow); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := review.New(ws, nil).Record(ctx, review.RecordInput{Task: id, Agent: "papi", Run: "papi-1", Worktree: wt, Branch: "agent/papi", BaseBranch: "main", FinalMessage: "A is added"}); err != nil {
		t.Fatal(err)
	}
	return root, id, wt
}

// The review commands end to end on a real repository: list, show (the
// diff, the final message), changes (the comments, file and line, in the
// README and in the printed prompt; flags out of order are a usage
// error), approve (exit 5 with checks not run, then --force lands it with
// a merge commit).
func TestReviewCommands(t *testing.T) {
	root, id, _ := reviewRepo(t, "review:\n  checks: [\"test -f a.go\"]\n")

	code, out, errOut := runCLI(t, root, cliOpts{}, "review", "list", "--json")
	var items []review.Item
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 1 || items[0].Files != 1 || items[0].Added != 3 || items[0].Checks != "not run" {
		t.Fatalf("review list --json: %d %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "review", "list")
	if code != 0 || !strings.Contains(out, "@papi") || !strings.Contains(out, "agent/papi") || !strings.Contains(out, "+3 −0") || !strings.Contains(out, "not run") {
		t.Errorf("review list:\n%s", out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "review", "show", id)
	if code != 0 || !strings.Contains(out, "+func A() {}") || !strings.Contains(out, "A is added") || !strings.Contains(out, "diff --git a/a.go b/a.go") {
		t.Errorf("review show:\n%s", out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "review", "show", id, "--stat")
	if code != 0 || !strings.Contains(out, "a.go | 3 +++") || strings.Contains(out, "+func A") {
		t.Errorf("review show --stat:\n%s", out)
	}

	// --line before any --comment, or without a file: usage errors.
	if code, _, errOut := runCLI(t, root, cliOpts{}, "review", "changes", id, "--line", "3", "--comment", "x"); code != 2 || !strings.Contains(errOut, "--line goes after the --comment") {
		t.Errorf("--line first: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "review", "changes", id, "--comment", "x", "--line", "3"); code != 2 || !strings.Contains(errOut, "needs the comment's --file") {
		t.Errorf("--line without --file: %d %s", code, errOut)
	}
	code, out, errOut = runCLI(t, root, cliOpts{}, "review", "changes", id, "--comment", "return an error", "--file", "a.go", "--line", "3", "--comment", "add a test")
	if code != 0 || !strings.Contains(out, "IN_PROGRESS again, for @papi") || !strings.Contains(out, "1. a.go:3: return an error") || !strings.Contains(out, "2. the whole change: add a test") {
		t.Fatalf("review changes: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "show", id)
	if code != 0 || !strings.Contains(out, "- `a.go:3`: return an error") || !strings.Contains(out, "Status:       IN_PROGRESS") {
		t.Errorf("task show after review changes:\n%s", out)
	}
	// Back in REVIEW (the agent's next run ends), approve needs the checks.
	ws, _ := workspace.New(root)
	if _, err := task.Finish(context.Background(), ws, id, task.FinishOptions{OK: true}, "@papi", taskNow); err != nil {
		t.Fatal(err)
	}
	// record finds the branch, its worktree and the base by itself.
	code, out, errOut = runCLI(t, root, cliOpts{}, "review", "record", id, "--agent", "papi")
	if code != 0 || !strings.Contains(out, "(round 2): 1 commit(s) on agent/papi from main") {
		t.Fatalf("review record: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, root, cliOpts{}, "review", "approve", id)
	if code != 5 || !strings.Contains(errOut, "checks have not run") {
		t.Errorf("approve with checks not run: %d %s", code, errOut)
	}
	code, out, errOut = runCLI(t, root, cliOpts{}, "review", "approve", id, "--merge", "--force", "--json")
	var res review.ApproveResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Task.Status != "DONE" || res.Change.Landed.Strategy != "merge" || !res.Change.Landed.Forced {
		t.Fatalf("approve --merge --force --json: %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.go")); err != nil || !strings.Contains(string(b), "func A") {
		t.Errorf("a.go in the checkout after landing: %q, %v", b, err)
	}
}

// On a terminal, review show colours the diff and shows what the agent
// wrote inert: an escape sequence in a file is printed as \x1b, not sent.
func TestReviewShowMakesTheDiffInert(t *testing.T) {
	root, id, _ := reviewRepo(t, "")
	ws, _ := workspace.New(root)
	svc := review.New(ws, nil)
	d, _ := svc.Show(context.Background(), id)
	// A second task whose file hides a line from the terminal.
	c, err := task.CreateTask(context.Background(), ws, task.CreateOptions{Description: "Sneaky"}, taskNow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(context.Background(), id, review.ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Claim(context.Background(), ws, c.Task.ID, "papi", taskNow); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Finish(context.Background(), ws, c.Task.ID, task.FinishOptions{OK: true}, "@papi", taskNow); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Change.Worktree, "s.go"), []byte("ok()\n\x1b[8mrm_rf()\x1b[0m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Record(context.Background(), review.RecordInput{Task: c.Task.ID, Agent: "papi", Worktree: d.Change.Worktree, Branch: "agent/papi", BaseBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	code, out := runOnTerminal(root, "review", "show", c.Task.ID)
	if code != 0 || strings.Contains(out, "\x1b[8m") || !strings.Contains(out, `\x1b[8mrm_rf()`) || !strings.Contains(out, "\x1b[32m+ok()\x1b[0m") {
		t.Errorf("review show on a terminal:\n%q", out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "review", "show", c.Task.ID)
	if code != 0 || !strings.Contains(out, "+\x1b[8mrm_rf()") {
		t.Errorf("review show piped should be git's bytes:\n%q", out)
	}
}

// runOnTerminal runs agentinfra in-process in dir as on a terminal 100
// columns wide, and returns its exit code and stdout.
func runOnTerminal(dir string, args ...string) (int, string) {
	var out, errOut strings.Builder
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTTY: true, Width: 100},
		Cwd:    dir,
		Now:    func() time.Time { return taskNow },
		Getenv: func(k string) string { return map[string]string{"HOME": dir}[k] },
	}
	code := run(context.Background(), args, f)
	return code, out.String()
}

// review record --remote records work pushed from elsewhere (a Coder
// workspace): the branch is fetched from the clone's remote, and review
// list shows the change next to the local one.
func TestReviewRecordFromARemote(t *testing.T) {
	root, _, _ := reviewRepo(t, "")
	dir := filepath.Dir(root)
	git := func(d string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", d}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	remote, there := filepath.Join(dir, "origin.git"), filepath.Join(dir, "coder-ws")
	git(dir, "clone", "-q", "--bare", root, remote)
	git(root, "remote", "add", "origin", remote)
	git(dir, "clone", "-q", remote, there)
	git(there, "switch", "-q", "-c", "agent/ws-zed")
	if err := os.WriteFile(filepath.Join(there, "b.go"), []byte("package a\n\nfunc B() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(there, "add", "b.go")
	git(there, "-c", "user.name=zed", "-c", "user.email=zed@example.com", "commit", "-q", "-m", "B")
	git(there, "push", "-q", "origin", "agent/ws-zed")

	ctx := context.Background()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: "Add the B function"}, taskNow)
	if err != nil {
		t.Fatal(err)
	}
	id := c.Task.ID
	if _, err := task.Claim(ctx, ws, id, "ws-zed", taskNow); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Finish(ctx, ws, id, task.FinishOptions{OK: true, Holder: "@ws-zed"}, "@ws-zed", taskNow); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, cliOpts{}, "review", "record", id, "--agent", "ws-zed", "--remote", "origin", "--json")
	var ch review.Change
	if code != 0 || json.Unmarshal([]byte(out), &ch) != nil || ch.Remote != "origin" || ch.Worktree != "" || len(ch.Commits) != 1 || ch.Commits[0].Subject != "B" {
		t.Fatalf("review record --remote: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "review", "list", "--json")
	var items []review.Item
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 2 {
		t.Fatalf("review list: %d\n%s", code, out)
	}
}
