package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// git runs git processes in one directory: a worktree, or the repository's
// common git directory for plumbing that needs no worktree. No shell is
// involved; git's environment is ours without the variables that would
// point it at another repository, index or worktree (a hook's GIT_DIR,
// GIT_INDEX_FILE), so every command acts where it is told.
type git struct {
	dir string
	// env is added to git's environment (an identity).
	env []string
}

// gitEnv is the environment of every git process.
func gitEnv(extra ...string) []string {
	// Messages and porcelain in the words this package parses.
	return append(append(ownEnv(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"), extra...)
}

// ownEnv is this process's environment without the variables that point
// git at a repository, index or worktree other than the one it runs in.
func ownEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return repoVar(k)
	})
}

// repoVar reports whether k is one of git's variables that name a
// repository, index or worktree.
func repoVar(k string) bool {
	switch k {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES":
		return true
	}
	return false
}

// gitError is a git command that failed: its arguments, exit code and
// what it said.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit code of a failed git command (-1 when it did not run).
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// run runs git with args and stdin, returning its stdout.
func (g git) run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", g.dir}, args...)...)
	cmd.Env = gitEnv(g.env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return stdout.Bytes(), &gitError{args: args, code: code, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// out runs git and returns its stdout trimmed.
func (g git) out(ctx context.Context, args ...string) (string, error) {
	b, err := g.run(ctx, nil, args...)
	return strings.TrimSpace(string(b)), err
}

// lines runs git and returns its NUL-separated output (-z) as a list.
func (g git) list(ctx context.Context, args ...string) ([]string, error) {
	b, err := g.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return splitNUL(b), nil
}

func splitNUL(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}

// rev resolves a revision to its commit hash.
func (g git) rev(ctx context.Context, rev string) (string, error) {
	return g.out(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
}

// isAncestor reports whether a is an ancestor of b (or b itself).
func (g git) isAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := g.run(ctx, nil, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, err
}

// dirty lists the paths of the worktree's uncommitted changes: staged,
// unstaged and untracked (ignored files are not changes).
func (g git) dirty(ctx context.Context) ([]string, error) {
	b, err := g.run(ctx, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range splitNUL(b) {
		if len(e) > 3 {
			out = append(out, e[3:])
		}
	}
	return out, nil
}

// changedPaths lists the paths that differ between two commits.
func (g git) changedPaths(ctx context.Context, from, to string) ([]string, error) {
	return g.list(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to)
}

// updateRef moves ref from old to new, refusing when ref is not at old
// (a compare-and-set; old "" means the ref must not exist).
func (g git) updateRef(ctx context.Context, ref, newRev, old, reason string) error {
	if old == "" {
		old = strings.Repeat("0", len(newRev))
	}
	_, err := g.run(ctx, nil, "update-ref", "-m", reason, ref, newRev, old)
	return err
}

// worktreeGit is git in the worktree at path (made absolute), and the
// repository's common git directory (absolute), or an Invalid error when
// path is no git worktree.
func worktreeGit(ctx context.Context, path string) (git, string, error) {
	wt, err := filepath.Abs(path)
	if err != nil {
		return git{}, "", err
	}
	g := git{dir: wt}
	gitDir, err := g.out(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return git{}, "", &agenterr.Error{Kind: agenterr.Invalid, Field: "worktree", Value: path, Reason: "not a git worktree", Err: err}
	}
	return g, gitDir, nil
}
