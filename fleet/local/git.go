package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// git runs git in dir and returns its trimmed stdout; the error carries
// git's stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// addWorktree creates path on a new branch from base; env is added to
// git's environment (the creation's marker, see Create).
func addWorktree(ctx context.Context, repo, path, branch, base string, env ...string) error {
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "worktree", "add", "-b", branch, path, base)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git worktree add: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// removeWorktree removes the worktree (its branch stays).
func removeWorktree(ctx context.Context, repo, path string, force bool) error {
	args := []string{"worktree", "remove", path}
	if force {
		args = []string{"worktree", "remove", "--force", "--force", path}
	}
	_, err := git(ctx, repo, args...)
	return err
}

// uncommitted lists the worktree's uncommitted changes (git status --porcelain).
func uncommitted(ctx context.Context, path string) ([]string, error) {
	out, err := git(ctx, path, "status", "--porcelain", "--untracked-files=normal")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// archiveBranch renames a deleted agent's branch to an archive name, so
// that its commits stay and the agent's name (its branch agent/NAME) is
// free for a new agent: {branch}-archived-{UTC stamp}, with -2, -3... when
// taken. The name is longer than any agent's branch (the stamp alone
// outruns MaxNameLen), so it never blocks a future agent. It returns the
// new name ("" when the branch does not exist: nothing to keep).
func archiveBranch(ctx context.Context, repo, branch string, now time.Time) (string, error) {
	if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		return "", nil
	}
	base := branch + "-archived-" + now.UTC().Format("20060102-150405")
	name := base
	for i := 2; ; i++ {
		if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+name); err != nil {
			break
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	if _, err := git(ctx, repo, "branch", "-m", branch, name); err != nil {
		return "", err
	}
	return name, nil
}
