package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// validateStaged checks the matrix as staged in git's index, as the
// pre-commit hook does. It returns nil, and the commit goes on, when there is
// nothing to check: no workspace, a workspace outside this repository, or a
// matrix that is neither staged nor tracked (a repository whose .agent/ is not
// committed yet, or is gitignored). A staged matrix that is empty or has no
// task table is an error; rows that HEAD has and the staged version lacks are
// a warning naming their IDs.
func validateStaged(ctx context.Context, f *Factory) (*validationResult, error) {
	ws, err := f.Workspace()
	if errors.Is(err, workspace.ErrNoWorkspace) {
		return nil, nil
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
		// Not in the index: quiet, unless the commit deletes a tracked matrix.
		removed := removedSinceHEAD(ctx, top, rel, matrix.Parse(nil))
		if len(removed) == 0 {
			return nil, nil
		}
		shown := displayPath(f.Cwd, ws.MatrixPath())
		return &validationResult{File: shown, Warnings: 1, Diagnostics: []matrix.Diagnostic{{File: shown, Line: 1, Col: 1, Severity: matrix.SeverityWarning,
			Message: fmt.Sprintf("the commit deletes the matrix and its %d %s: %s; if that is not intended, restore it (git restore --staged --worktree %s)",
				len(removed), plural(len(removed), "row", "rows"), strings.Join(removed, ", "), rel)}}}, nil
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
	switch {
	case strings.TrimSpace(staged) == "":
		add(matrix.SeverityError, "the staged matrix is empty: committing it would drop every task; restore it (git restore --staged --worktree %s) or stage the file you meant", rel)
	case !doc.HasTaskTable():
		add(matrix.SeverityError, "the staged matrix has no task table (a table whose header has ID and Status columns): committing it would drop every task; restore the table (git show HEAD:%s) or convert an older format with `agentinfra migrate`", rel)
	}
	if removed := removedSinceHEAD(ctx, top, rel, doc); len(removed) > 0 {
		add(matrix.SeverityWarning, "%d %s in HEAD %s not in the staged matrix: %s; if that is not intended, restore them from `git show HEAD:%s`",
			len(removed), plural(len(removed), "row", "rows"), plural(len(removed), "is", "are"), strings.Join(removed, ", "), rel)
	}
	return &r, nil
}

// removedSinceHEAD lists, in HEAD's order, the IDs of HEAD's matrix that the
// staged one lacks; none when HEAD does not exist or has no matrix.
func removedSinceHEAD(ctx context.Context, top, rel string, staged *matrix.Doc) []string {
	blob, err := gitOutput(ctx, top, "rev-parse", "-q", "--verify", "HEAD:"+rel)
	if err != nil {
		return nil // no commit yet, or the matrix is new
	}
	old, err := gitOutput(ctx, top, "cat-file", "blob", strings.TrimSpace(blob))
	if err != nil {
		return nil
	}
	have := map[string]bool{}
	for _, id := range staged.IDs() {
		have[id] = true
	}
	var removed []string
	for _, id := range matrix.Parse([]byte(old)).IDs() {
		if !have[id] && id != "" {
			have[id] = true // list a duplicated ID once
			removed = append(removed, id)
		}
	}
	return removed
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
