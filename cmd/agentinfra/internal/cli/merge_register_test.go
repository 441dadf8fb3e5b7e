package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Both branches append a task: git's line merge conflicts on the two
// appended lines; the driver keeps both.
func appendOnBothBranches(t *testing.T, r *mergeRepo) {
	t.Helper()
	r.git("checkout", "-q", "-b", "theirs")
	r.commitMatrix("theirs", addAfter(mergeBase, "T-3", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02")), nil)
	r.git("checkout", "-q", "main")
	r.commitMatrix("ours", addAfter(mergeBase, "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")), nil)
}

// A fresh clone has the committed .gitattributes but not the git config
// (git never copies it): validate and the pre-commit hook warn, saying the
// one command that fixes it, and git merges the matrix line by line. After
// `agentinfra hook install` the same merge is clean.
func TestFreshCloneWarnsUntilHookInstall(t *testing.T) {
	origin := newMergeRepo(t, mergeBase)
	if got := mustRead(t, filepath.Join(origin.root, ".gitattributes")); got != ".agent/DEVELOPMENT_MATRIX.md merge=agentinfra\n" {
		t.Fatalf(".gitattributes: %q", got)
	}
	appendOnBothBranches(t, origin)
	clone := &mergeRepo{t: t, root: filepath.Join(t.TempDir(), "clone"), bin: origin.bin}
	if out, err := (&mergeRepo{t: t, root: filepath.Dir(clone.root)}).gitErr("clone", "-q", origin.root, clone.root); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	clone.git("branch", "-q", "theirs", "origin/theirs")
	const warning = ".gitattributes:1:1: warning: the matrix's merge driver (merge=agentinfra) is named here but this clone's git config has no merge.agentinfra.driver, so git merges the matrix line by line, without a word; run `agentinfra hook install` to register it"
	out, code := clone.agentinfra("validate")
	if code != 0 || !strings.Contains(out, warning) {
		t.Errorf("validate in the fresh clone: exit %d\n%s\nwant the warning:\n%s", code, out, warning)
	}
	// The hook as an earlier agentinfra (or a copy from another clone)
	// installed it: it warns, and the commit goes on.
	hook := filepath.Join(clone.root, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"+hookBlock(clone.bin)), 0o755); err != nil {
		t.Fatal(err)
	}
	clone.setMatrix(setRow(clone.matrix(), "T-1", mrow("T-1", "DONE", "go-testing", "@ann", "First task", "2026-01-02")))
	clone.git("add", "-A")
	if out, err := clone.gitErr("commit", "-qm", "T-1 done"); err != nil || !strings.Contains(out, strings.TrimPrefix(warning, ".gitattributes:1:1: ")) {
		t.Errorf("commit with the hook: %v\n%s\nwant the warning", err, out)
	}
	clone.git("reset", "-q", "--hard", "HEAD~1")
	// Without the driver: git's line merge, and a conflict on the two
	// appended rows.
	if out, err := clone.gitErr("merge", "--no-edit", "theirs"); err == nil || strings.Contains(out, "agentinfra merge-driver") {
		t.Fatalf("merge without the driver: %v\n%s", err, out)
	}
	clone.git("merge", "--abort")
	if out, code := clone.agentinfra("hook", "install"); code != 0 || !strings.Contains(out, "registered the matrix's merge driver in this clone's git config") || strings.Contains(out, ".gitattributes") {
		t.Fatalf("hook install: %d\n%s", code, out)
	}
	if out, code := clone.agentinfra("validate"); code != 0 || strings.Contains(out, "warning") {
		t.Errorf("validate after hook install: %d\n%s", code, out)
	}
	if out, err := clone.gitErr("merge", "--no-edit", "theirs"); err != nil {
		t.Fatalf("merge after hook install: %v\n%s", err, out)
	}
	clone.checkResult(addAfter(addAfter(mergeBase, "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")), "T-4", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02")))
	// Installing again changes nothing.
	if out, code := clone.agentinfra("hook", "install"); code != 0 || strings.Contains(out, "registered") {
		t.Errorf("second hook install: %d\n%s", code, out)
	}
}

// The driver runs from any folder git runs it in, by the absolute path of
// the binary that registered it; when that binary is gone and none is on
// PATH, git's own line merge runs, so the file gets markers rather than
// one side's version.
func TestMergeDriverCommandFallsBack(t *testing.T) {
	r := newMergeRepo(t, mergeBase)
	moved := filepath.Join(t.TempDir(), "agentinfra")
	copyBinary(t, r.bin, moved)
	if out, code := (&mergeRepo{t: t, root: r.root, bin: moved}).agentinfra("hook", "install"); code != 0 {
		t.Fatalf("hook install: %s", out)
	}
	driver := r.git("config", "--get", "merge.agentinfra.driver")
	if !strings.Contains(driver, "b='"+moved+"'") {
		t.Fatalf("driver %q does not name %s", driver, moved)
	}
	appendOnBothBranches(t, r)
	// From a subfolder, with PATH holding no agentinfra.
	sub := filepath.Join(r.root, ".agent")
	cmd := exec.Command("git", "merge", "--no-edit", "theirs")
	cmd.Dir, cmd.Env = sub, append(gitEnv(), "PATH=/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("merge from .agent/: %v\n%s", err, out)
	}
	r.git("reset", "-q", "--hard", "HEAD~1")
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("git", "merge", "--no-edit", "theirs")
	cmd.Dir, cmd.Env = r.root, append(gitEnv(), "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "agentinfra merge driver: agentinfra is not at "+moved+" nor on PATH") {
		t.Fatalf("merge with the binary gone: %v\n%s", err, out)
	}
	if m := r.matrix(); !strings.Contains(m, "<<<<<<< ours\n| T-4 |") || !strings.Contains(m, "| T-5 |") {
		t.Errorf("the line merge's markers are not in the file:\n%s", m)
	}
}

// task create on a branch never takes a numbered ID that another local
// branch head, or another worktree's file (committed or not), holds.
func TestTaskCreateSkipsIDsOfOtherBranches(t *testing.T) {
	r := newMergeRepo(t, mergeBase)
	create := func(dir, desc string) string {
		t.Helper()
		cmd := exec.Command(r.bin, "task", "create", "--description", desc, "--mode", "coder")
		cmd.Dir, cmd.Env = dir, gitEnv()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("task create in %s: %v %s", dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	r.git("checkout", "-q", "-b", "other")
	if id := create(r.root, "On the other branch"); id != "T-4" {
		t.Fatalf("first create: %s, want T-4", id)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "T-4 on other")
	r.git("checkout", "-q", "main")
	if id := create(r.root, "On main"); id != "T-5" {
		t.Errorf("create on main: %s, want T-5 (T-4 is other's)", id)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "wt", wt, "main")
	if id := create(wt, "In the worktree"); id != "T-6" {
		t.Errorf("create in the worktree: %s, want T-6 (T-5 is main's, not committed)", id)
	}
	if id := create(r.root, "On main again"); id != "T-7" {
		t.Errorf("create on main again: %s, want T-7 (T-6 is the worktree's, not committed)", id)
	}
}

// merge-driver on three files, as git calls it: the merge is written into
// OURS; exit 0 when clean, 1 with the conflicts named on stderr. When not
// even git's line merge can run, both whole versions go between markers:
// never one side's version alone while git records a conflict.
func TestMergeDriverOnFiles(t *testing.T) {
	bin := taskBinary(t)
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	drive := func(env []string, base, ours, theirs string) (string, string, int) {
		b, o, th := write("base", base), write("ours", ours), write("theirs", theirs)
		cmd := exec.Command(bin, "merge-driver", b, o, th, ".agent/DEVELOPMENT_MATRIX.md", "7")
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		return mustRead(t, o), string(out), cmd.ProcessState.ExitCode()
	}
	t4 := mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")
	t5 := mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02")
	got, out, code := drive(gitEnv(), mergeBase, addAfter(mergeBase, "T-3", t4), addAfter(mergeBase, "T-3", t5))
	if want := addAfter(addAfter(mergeBase, "T-3", t4), "T-4", t5); code != 0 || got != want || out != "" {
		t.Errorf("clean merge: exit %d, output %q\n%s", code, out, got)
	}
	got, out, code = drive(gitEnv(), mergeBase, setRow(mergeBase, "T-2", mrow("T-2", "DONE", "", "", "Second task", "2026-01-01")),
		setRow(mergeBase, "T-2", mrow("T-2", "BLOCKED", "", "", "Second task", "2026-01-01")))
	if code != 1 || !strings.Contains(got, "<<<<<<< ours\n| T-2 | DONE |") ||
		!strings.Contains(out, `agentinfra merge-driver: .agent/DEVELOPMENT_MATRIX.md:8: task T-2: both sides changed Status (ours "DONE", theirs "BLOCKED")`) {
		t.Errorf("conflict: exit %d\n%s\n%s", code, out, got)
	}
	// A table added on one side: merged as lines, and no git to do it.
	ours := mergeBase + "\n" + strings.SplitN(mergeBase, "| T-1", 2)[0][strings.Index(mergeBase, "| ID"):] + t4 + "\n"
	theirs := strings.Replace(mergeBase, "Kept as written.", "Kept.", 1)
	got, out, code = drive([]string{"PATH=" + t.TempDir()}, mergeBase, ours, theirs)
	if code != 1 || got != "<<<<<<< ours\n"+ours+"=======\n"+theirs+">>>>>>> theirs\n" || !strings.Contains(out, "writing both versions between conflict markers") {
		t.Errorf("no git: exit %d\n%s\n%s", code, out, got)
	}
}
