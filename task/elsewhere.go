package task

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// IDsElsewhere returns the task IDs of the matrix at every local branch
// head and in every other worktree's file of the git repository ws is in:
// what a new task on this branch must not take, so that two branches never
// add the same prefix-number ID (TASK-12) and collide when they merge
// (issue 32). Empty outside a git repository, or when git cannot say.
func IDsElsewhere(ctx context.Context, ws *workspace.Workspace) map[string]bool {
	out := map[string]bool{}
	top, err := gitText(ctx, ws.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return out
	}
	rel, ok := relInRepo(top, ws.MatrixPath())
	if !ok {
		return out
	}
	seen := map[string]bool{} // matrix texts read already (most branches share one)
	if own, err := os.ReadFile(ws.MatrixPath()); err == nil {
		seen[string(own)] = true // this worktree's own rows are the caller's
	}
	add := func(src []byte) {
		if len(src) == 0 || seen[string(src)] {
			return
		}
		seen[string(src)] = true
		for _, id := range idsIn(src) {
			out[id] = true
		}
	}
	for _, src := range branchMatrices(ctx, top, rel) {
		add(src)
	}
	list, err := gitText(ctx, top, "worktree", "list", "--porcelain")
	if err != nil {
		return out
	}
	self, _ := filepath.EvalSymlinks(top)
	for _, line := range strings.Split(list, "\n") {
		p, ok := strings.CutPrefix(line, "worktree ")
		if !ok {
			continue
		}
		if real, _ := filepath.EvalSymlinks(p); real == self {
			continue
		}
		if src, err := os.ReadFile(filepath.Join(p, filepath.FromSlash(rel))); err == nil {
			add(src)
		}
	}
	return out
}

// idsIn lists the IDs of a matrix, those of both sides of a merge's
// conflicts included.
func idsIn(src []byte) []string {
	if len(matrix.ConflictBlocks(src)) > 0 {
		src = matrix.ResolveConflicts(src, func(c matrix.ConflictBlock) (string, bool) { return c.Ours + c.Theirs, true })
	}
	return matrix.Parse(src).IDs()
}

// branchMatrices reads the matrix at rel of every local branch head with
// one `git cat-file --batch`.
func branchMatrices(ctx context.Context, top, rel string) [][]byte {
	heads, err := gitText(ctx, top, "for-each-ref", "--format=%(objectname)", "refs/heads")
	if err != nil || strings.TrimSpace(heads) == "" {
		return nil
	}
	var in bytes.Buffer
	for _, h := range strings.Fields(heads) {
		fmt.Fprintf(&in, "%s:%s\n", h, rel)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", top, "cat-file", "--batch")
	cmd.Stdin = &in
	outp, err := cmd.Output()
	if err != nil {
		return nil
	}
	var out [][]byte
	r := bufio.NewReader(bytes.NewReader(outp))
	for {
		header, err := r.ReadString('\n')
		if err != nil {
			return out
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			continue // "<name> missing": no matrix on that branch
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return out
		}
		blob := make([]byte, size)
		if _, err := io.ReadFull(r, blob); err != nil {
			return out
		}
		_, _ = r.ReadByte() // the line ending after the content
		out = append(out, blob)
	}
}

// gitText runs git in dir and returns its output without the last line ending.
func gitText(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSuffix(string(out), "\n"), err
}

// relInRepo returns path relative to the repository top, slash-separated;
// false when it lies outside.
func relInRepo(top, path string) (string, bool) {
	if t, err := filepath.EvalSymlinks(top); err == nil {
		top = t
	}
	if p, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(p, filepath.Base(path))
	}
	rel, err := filepath.Rel(top, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
