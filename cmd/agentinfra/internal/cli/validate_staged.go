package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// validateStaged checks the matrix as staged in git's index, as the
// pre-commit hook does. It returns nil, and the commit goes on, when there is
// nothing to check: no workspace and no matrix in HEAD, a workspace outside
// this repository, or a matrix that is neither staged nor tracked (a
// repository whose .agent/ is not committed yet, or is gitignored). Errors
// refuse the commit (issues 18 and 19): a staged matrix that is empty, has no
// task table, or has no row while HEAD's has rows; a commit that deletes or
// moves the matrix HEAD has (git rm, git mv, git rm -r .agent). Rows that HEAD
// has and the staged version lacks, while others stay, are a warning naming
// their IDs.
func validateStaged(ctx context.Context, f *Factory) (*validationResult, error) {
	ws, err := f.Workspace()
	if errors.Is(err, workspace.ErrNoWorkspace) {
		// No .agent/ here: `git rm -r .agent` removes it from the work tree
		// too. The commit must not drop a matrix HEAD has.
		return removedWorkspace(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	top, err := gitOutput(ctx, ws.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		if _, cwdErr := gitOutput(ctx, f.Cwd, "rev-parse", "--show-toplevel"); cwdErr == nil {
			return nil, nil // a workspace above this repository (~/.agent): not ours to check
		}
		return nil, fmt.Errorf("--staged checks git's index: %w; run it inside a git repository", err)
	}
	rel, ok := pathInRepo(strings.TrimSpace(top), ws.MatrixPath())
	if !ok {
		return nil, nil
	}
	top = strings.TrimSpace(top)
	listed, err := gitOutput(ctx, top, "ls-files", "--cached", "-z", "--", rel)
	if err != nil {
		return nil, fmt.Errorf("list the staged files with git: %w", err)
	}
	if listed == "" {
		// Not in the index: quiet, unless the commit deletes (or moves)
		// the matrix HEAD has.
		return matrixLeavesIndex(ctx, top, rel, displayPath(f.Cwd, ws.MatrixPath()))
	}
	staged, err := gitOutput(ctx, top, "show", ":"+rel)
	if err != nil {
		return nil, fmt.Errorf("read the staged matrix with git: %w", err)
	}
	r, err := validateBytes(f, ws, []byte(staged), ws.MatrixPath())
	if err != nil {
		return nil, err
	}
	doc := matrix.Parse([]byte(staged))
	add := func(sev matrix.Severity, format string, a ...any) {
		r.Diagnostics = append(r.Diagnostics, matrix.Diagnostic{File: r.File, Line: 1, Col: 1, Severity: sev, Message: fmt.Sprintf(format, a...)})
		if sev == matrix.SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	// validate itself reports an empty file and one with no task table
	// (errors); here they are said in the commit's words.
	r.Diagnostics = slices.DeleteFunc(r.Diagnostics, func(d matrix.Diagnostic) bool {
		drop := d.Line == 1 && d.Severity == matrix.SeverityError && !doc.HasTaskTable() &&
			(strings.Contains(d.Message, "has no task table") || strings.Contains(d.Message, "the matrix is empty"))
		if drop {
			r.Errors--
		}
		return drop
	})
	removed, headRows := removedSinceHEAD(ctx, top, rel, doc)
	switch {
	case strings.TrimSpace(staged) == "":
		add(matrix.SeverityError, "the staged matrix is empty: committing it would drop every task; restore it (git restore --staged --worktree %s) or stage the file you meant", rel)
	case !doc.HasTaskTable():
		add(matrix.SeverityError, "the staged matrix has no task table (a table whose header has ID and Status columns): committing it would drop every task; restore the table (git show HEAD:%s) or convert an older format with `agentinfra migrate`", rel)
	case doc.NumTasks() == 0 && len(doc.ReadProblems()) == 0 && headRows > 0:
		add(matrix.SeverityError, "the staged matrix has no task row, and HEAD's has %d (%s): committing it would drop every task; restore them (git restore --staged --worktree %s), or if you mean it, commit with --no-verify",
			headRows, strings.Join(removed, ", "), rel)
		removed = nil // said
	}
	if len(removed) > 0 {
		add(matrix.SeverityWarning, "%d %s in HEAD %s not in the staged matrix: %s; if that is not intended, restore them from `git show HEAD:%s`",
			len(removed), Plural(len(removed), "row", "rows"), Plural(len(removed), "is", "are"), strings.Join(removed, ", "), rel)
	}
	return &r, nil
}

// matrixLeavesIndex is the check of a commit whose index lacks the matrix at
// rel: an error when HEAD has it (deleted, or moved where agentinfra does not
// read it), nil otherwise.
func matrixLeavesIndex(ctx context.Context, top, rel, shown string) (*validationResult, error) {
	if _, err := gitOutput(ctx, top, "rev-parse", "-q", "--verify", "HEAD:"+rel); err != nil {
		return nil, nil // no commit yet, or never committed: nothing is lost
	}
	removed, _ := removedSinceHEAD(ctx, top, rel, matrix.Parse(nil))
	what := "deletes the matrix"
	if to := renamedTo(ctx, top, rel); to != "" {
		what = "moves the matrix to " + to + ", where agentinfra does not read it,"
	}
	rows := "(it has no row)"
	if len(removed) > 0 {
		rows = fmt.Sprintf("and its %d %s: %s", len(removed), Plural(len(removed), "row", "rows"), strings.Join(removed, ", "))
	}
	return &validationResult{File: shown, Errors: 1, Diagnostics: []matrix.Diagnostic{{File: shown, Line: 1, Col: 1, Severity: matrix.SeverityError,
		Message: fmt.Sprintf("the commit %s %s; restore it (git restore --staged --worktree %s, or git reset -q HEAD -- %s && git checkout -- %s), or if you mean to drop the workspace's tasks, commit with --no-verify",
			what, rows, rel, rel, rel)}}}, nil
}

// renamedTo is where the staged changes move rel (git mv), or "".
func renamedTo(ctx context.Context, top, rel string) string {
	out, err := gitOutput(ctx, top, "diff", "--cached", "--name-status", "-z", "-M", "HEAD", "--")
	if err != nil {
		return ""
	}
	f := strings.Split(out, "\x00")
	for i := 0; i < len(f); i++ {
		if strings.HasPrefix(f[i], "R") && i+2 < len(f) {
			if f[i+1] == rel {
				return f[i+2]
			}
			i += 2
		}
	}
	return ""
}

// removedWorkspace is the check when no workspace is found: the commit may
// remove .agent/ from the repository (git rm -r .agent), which the hook run
// at the repository's top must refuse as it refuses deleting the matrix.
func removedWorkspace(ctx context.Context, f *Factory) (*validationResult, error) {
	top, err := gitOutput(ctx, f.Cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, nil // not in a repository: nothing to check
	}
	top = strings.TrimSpace(top)
	rel := ".agent/DEVELOPMENT_MATRIX.md" // where a workspace at the top keeps it
	listed, err := gitOutput(ctx, top, "ls-files", "--cached", "-z", "--", rel)
	if err != nil || listed != "" {
		return nil, nil // staged: the work tree lacks it, the commit does not
	}
	return matrixLeavesIndex(ctx, top, rel, displayPath(f.Cwd, filepath.Join(top, filepath.FromSlash(rel))))
}

// removedSinceHEAD lists, in HEAD's order, the IDs of HEAD's matrix that the
// staged one lacks, and how many rows HEAD's has; none when HEAD does not
// exist or has no matrix.
func removedSinceHEAD(ctx context.Context, top, rel string, staged *matrix.Doc) ([]string, int) {
	blob, err := gitOutput(ctx, top, "rev-parse", "-q", "--verify", "HEAD:"+rel)
	if err != nil {
		return nil, 0 // no commit yet, or the matrix is new
	}
	old, err := gitOutput(ctx, top, "cat-file", "blob", strings.TrimSpace(blob))
	if err != nil {
		return nil, 0
	}
	have := map[string]bool{}
	for _, id := range staged.IDs() {
		have[id] = true
	}
	var removed []string
	head := matrix.Parse([]byte(old)).IDs()
	for _, id := range head {
		if !have[id] && id != "" {
			have[id] = true // list a duplicated ID once
			removed = append(removed, id)
		}
	}
	return removed, len(head)
}

// pathInRepo returns path relative to the repository top, slash-separated,
// or false when it lies outside.
func pathInRepo(top, path string) (string, bool) {
	if p, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(p, filepath.Base(path))
	}
	if t, err := filepath.EvalSymlinks(top); err == nil {
		top = t
	}
	rel, err := filepath.Rel(top, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// gitOutput runs git in dir and returns its stdout; stderr goes into the error.
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
