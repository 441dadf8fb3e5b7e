package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// The lock file agentinfra creates is not listed by git status: in a
// repository, in a linked worktree (the exclude of the common .git), and not
// twice; with init's .gitignore nothing is added; outside git nothing happens.
func TestHideFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	if err := os.MkdirAll(filepath.Join(repo, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, ".agent", "DEVELOPMENT_MATRIX.md"), "m\n")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "m")
	lock := filepath.Join(repo, ".agent", ".DEVELOPMENT_MATRIX.md.lock")
	write(lock, "")
	if st := gitRun(t, repo, "status", "--porcelain"); !strings.Contains(st, ".agent/") {
		t.Fatalf("the lock should show before: %q", st)
	}
	prev := filepath.Join(repo, ".agent", ".DEVELOPMENT_MATRIX.md.prev")
	write(prev, "m\n")
	HideFromGit(lock, prev, filepath.Join(repo, ".agent", ".DEVELOPMENT_MATRIX.md.tmp-*"))
	HideFromGit(lock, prev)
	write(filepath.Join(repo, ".agent", ".DEVELOPMENT_MATRIX.md.tmp-123"), "")
	if st := gitRun(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("git status after HideFromGit: %q", st)
	}
	exclude, _ := os.ReadFile(filepath.Join(repo, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.agent/.DEVELOPMENT_MATRIX.md.lock\n") != 1 || strings.Count(string(exclude), "/.agent/.DEVELOPMENT_MATRIX.md.prev\n") != 1 {
		t.Errorf("exclude:\n%s", exclude)
	}

	// A linked worktree: its own lock, the common exclude (one entry serves both).
	wt := filepath.Join(t.TempDir(), "wt")
	gitRun(t, repo, "worktree", "add", "-q", wt)
	wlock := filepath.Join(wt, ".agent", ".DEVELOPMENT_MATRIX.md.lock")
	write(wlock, "")
	HideFromGit(wlock)
	if st := gitRun(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("worktree git status: %q", st)
	}

	// init's .gitignore names it: nothing is added.
	repo2 := t.TempDir()
	gitRun(t, repo2, "init", "-q")
	os.MkdirAll(filepath.Join(repo2, ".agent"), 0o755)
	write(filepath.Join(repo2, ".agent", ".gitignore"), ".DEVELOPMENT_MATRIX.md.lock\n")
	HideFromGit(filepath.Join(repo2, ".agent", ".DEVELOPMENT_MATRIX.md.lock"))
	if b, _ := os.ReadFile(filepath.Join(repo2, ".git", "info", "exclude")); strings.Contains(string(b), "agentinfra") {
		t.Errorf("exclude written although .gitignore names the lock:\n%s", b)
	}
	// No repository: nothing happens, nothing fails.
	plain := t.TempDir()
	HideFromGit(filepath.Join(plain, ".agent", ".DEVELOPMENT_MATRIX.md.lock"))
	if _, err := os.Stat(filepath.Join(plain, ".git")); err == nil {
		t.Error("a .git appeared")
	}
}

// A --root that does not exist is said so, without advising an init that
// would fail there too (issue 19).
func TestFindRootThatDoesNotExist(t *testing.T) {
	_, err := Find(filepath.Join(t.TempDir(), "nope"), "--root", ".")
	if err == nil || !strings.Contains(err.Error(), "is not a folder") || strings.Contains(err.Error(), "init") {
		t.Errorf("Find: %v", err)
	}
	// The message names where the root came from, as the caller says.
	if _, err := Find(filepath.Join(t.TempDir(), "nope"), "$AGENTINFRA_ROOT", "."); err == nil || !strings.Contains(err.Error(), "(from $AGENTINFRA_ROOT)") {
		t.Errorf("Find from the environment: %v", err)
	}
	dir := t.TempDir()
	if _, err := Find(dir, "--root", "."); err == nil || !strings.Contains(err.Error(), "agentinfra init --root "+dir) {
		t.Errorf("Find of a folder without .agent/: %v", err)
	}
}
