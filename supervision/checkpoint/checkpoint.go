// Package checkpoint snapshots a supervised session's worktree and puts it
// back. A checkpoint is the whole tree as git sees it — tracked files with
// their changes, new (untracked) files, recursively; what .gitignore
// ignores is not the agent's work and stays out — written as a git commit
// under the private ref refs/agentinfra/checkpoints/s<session>/<commit>
// (never a branch: nothing a person pushes or sees in `git log`), with a
// hash per file (git's blob ID) kept in the store. The repository's own
// index, HEAD and branches are never touched: every step works on a
// temporary index.
//
// Restore compares the tree now with the checkpoint's, lists the files that
// changed since (diverged), and refuses without Force when any did; with
// it, the tree matches the checkpoint byte for byte (modes and symlinks
// too), files created since are removed.
package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/store"
)

// RefPrefix is where checkpoints live in the repository.
const RefPrefix = "refs/agentinfra/checkpoints/"

// Change is one file that differs between a checkpoint and the tree now.
type Change struct {
	Path string `json:"path"`
	// Status: modified, added (not in the checkpoint), deleted (in the
	// checkpoint, not on disk now).
	Status string `json:"status"`
}

// ErrDiverged is refused restore: files changed since the checkpoint.
var ErrDiverged = agenterr.New(agenterr.Refused, "files changed since the checkpoint")

// DivergedError lists them.
type DivergedError struct {
	Checkpoint int64
	Changes    []Change
}

func (e *DivergedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d file(s) differ from checkpoint %d:", ErrDiverged, len(e.Changes), e.Checkpoint)
	for i, c := range e.Changes {
		if i == 20 {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Changes)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %s %s", c.Status, c.Path)
	}
	b.WriteString("\nrestoring overwrites them: run again with --force to restore anyway")
	return b.String()
}

func (e *DivergedError) Unwrap() error { return ErrDiverged }

// git runs git in dir with extra environment; stdout is returned, stderr
// goes into the error.
func git(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// repoRoot is the top of the worktree that holds dir.
func repoRoot(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("checkpoints need a git repository: %s is not in one (git init makes one): %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// treeNow writes the worktree as it is now (tracked, modified and
// untracked files, not ignored ones) to a tree object through a temporary
// index, and returns its ID.
func treeNow(ctx context.Context, root string) (string, error) {
	idx, err := os.CreateTemp("", "agentinfra-checkpoint-index-*")
	if err != nil {
		return "", err
	}
	idx.Close()
	os.Remove(idx.Name()) // git creates it; an empty file is not an index
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	// Start from HEAD's index when there is a HEAD: add -A then only hashes
	// what changed (fast on a big tree).
	if _, err := git(ctx, root, nil, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		if _, err := git(ctx, root, env, nil, "read-tree", "HEAD"); err != nil {
			return "", err
		}
	}
	if _, err := git(ctx, root, env, nil, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	out, err := git(ctx, root, env, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

var identity = []string{
	"GIT_AUTHOR_NAME=agentinfra", "GIT_AUTHOR_EMAIL=agentinfra@localhost",
	"GIT_COMMITTER_NAME=agentinfra", "GIT_COMMITTER_EMAIL=agentinfra@localhost",
}

// Files maps each file of a tree to its blob ID (git's hash of the bytes).
func files(ctx context.Context, root, tree string) (map[string]string, error) {
	out, err := git(ctx, root, nil, nil, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> <type> <id>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) == 3 {
			m[string(path)] = f[0] + ":" + f[2]
		}
	}
	return m, nil
}

// Create snapshots the worktree that holds dir for the session and records
// it in the store.
func Create(ctx context.Context, st *store.Store, sessionID int64, dir, label, by string) (store.Checkpoint, error) {
	root, err := repoRoot(ctx, dir)
	if err != nil {
		return store.Checkpoint{}, err
	}
	tree, err := treeNow(ctx, root)
	if err != nil {
		return store.Checkpoint{}, err
	}
	msg := fmt.Sprintf("agentinfra checkpoint of session %d", sessionID)
	if label != "" {
		msg += ": " + label
	}
	args := []string{"commit-tree", tree, "-m", msg}
	if head, err := git(ctx, root, nil, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		args = append(args, "-p", strings.TrimSpace(string(head)))
	}
	out, err := git(ctx, root, identity, nil, args...)
	if err != nil {
		return store.Checkpoint{}, err
	}
	commit := strings.TrimSpace(string(out))
	ref := fmt.Sprintf("%ss%d/%s", RefPrefix, sessionID, commit)
	if _, err := git(ctx, root, nil, nil, "update-ref", ref, commit); err != nil {
		return store.Checkpoint{}, err
	}
	fm, err := files(ctx, root, tree)
	if err != nil {
		return store.Checkpoint{}, err
	}
	fj, _ := json.Marshal(fm)
	c, err := st.AddCheckpoint(ctx, store.Checkpoint{SessionID: sessionID, Label: label, Dir: root, Ref: ref, Commit: commit, Files: string(fj), CreatedBy: by})
	if err != nil {
		git(ctx, root, nil, nil, "update-ref", "-d", ref) // no row, no ref
		return store.Checkpoint{}, err
	}
	return c, nil
}

// Diverged lists the files that differ between checkpoint c and its tree
// now, by path.
func Diverged(ctx context.Context, c store.Checkpoint) ([]Change, error) {
	var then map[string]string
	if err := json.Unmarshal([]byte(c.Files), &then); err != nil {
		return nil, fmt.Errorf("checkpoint %d has no file list (taken by an older agentinfra?): %w", c.ID, err)
	}
	tree, err := treeNow(ctx, c.Dir)
	if err != nil {
		return nil, err
	}
	now, err := files(ctx, c.Dir, tree)
	if err != nil {
		return nil, err
	}
	var out []Change
	for p, h := range then {
		switch n, ok := now[p]; {
		case !ok:
			out = append(out, Change{p, "deleted"})
		case n != h:
			out = append(out, Change{p, "modified"})
		}
	}
	for p := range now {
		if _, ok := then[p]; !ok {
			out = append(out, Change{p, "added"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// RestoreOptions say how Restore goes.
type RestoreOptions struct {
	// Force restores even when files changed since the checkpoint.
	Force bool
	By    string
	// Surface is where the person asked (store.SurfaceTerminal…).
	Surface string
}

// Restore puts checkpoint c's tree back: the files of the checkpoint as
// they were, the files created since removed. Files changed since refuse
// it with a *DivergedError unless o.Force. It returns what it changed.
// The caller stops the session's run first.
func Restore(ctx context.Context, st *store.Store, c store.Checkpoint, o RestoreOptions) ([]Change, error) {
	if c.Commit == "" || c.Dir == "" {
		return nil, fmt.Errorf("checkpoint %d was recorded without its commit (an older agentinfra): it cannot be restored", c.ID)
	}
	if _, err := git(ctx, c.Dir, nil, nil, "cat-file", "-e", c.Commit+"^{tree}"); err != nil {
		return nil, fmt.Errorf("checkpoint %d: its commit %s is gone from %s (ref %s deleted?): %w", c.ID, c.Commit, c.Dir, c.Ref, err)
	}
	changes, err := Diverged(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return nil, st.RecordRestore(ctx, c, o.By, o.Surface, nil)
	}
	if !o.Force {
		return changes, &DivergedError{Checkpoint: c.ID, Changes: changes}
	}
	idx, err := os.CreateTemp("", "agentinfra-restore-index-*")
	if err != nil {
		return nil, err
	}
	idx.Close()
	os.Remove(idx.Name())
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := git(ctx, c.Dir, env, nil, "read-tree", c.Commit+"^{tree}"); err != nil {
		return nil, err
	}
	// Files created since go first (a file may have become a folder).
	for _, ch := range changes {
		if ch.Status == "added" {
			p := filepath.Join(c.Dir, filepath.FromSlash(ch.Path))
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("remove %s (created since the checkpoint): %w", ch.Path, err)
			}
			removeEmptyParents(c.Dir, filepath.Dir(p))
		}
	}
	var paths []byte
	for _, ch := range changes {
		if ch.Status != "added" {
			paths = append(paths, ch.Path...)
			paths = append(paths, 0)
		}
	}
	if len(paths) > 0 {
		// checkout-index writes through a temporary file and a rename, with
		// the mode (executable bit) and symlinks as recorded.
		if _, err := git(ctx, c.Dir, env, paths, "checkout-index", "-f", "-z", "--stdin"); err != nil {
			return nil, err
		}
	}
	left, err := Diverged(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		return changes, fmt.Errorf("checkpoint %d restored, but %d file(s) still differ (%s %s…): a process is writing the tree", c.ID, len(left), left[0].Status, left[0].Path)
	}
	var names []string
	for _, ch := range changes {
		names = append(names, ch.Path)
	}
	return changes, st.RecordRestore(ctx, c, o.By, o.Surface, names)
}

func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// DeleteRefs removes the refs of checkpoints (retention: purged sessions'
// checkpoints). A ref already gone is fine.
func DeleteRefs(ctx context.Context, cps []store.Checkpoint) error {
	byDir := map[string][]string{}
	seen := map[string]bool{}
	for _, c := range cps {
		if c.Dir != "" && strings.HasPrefix(c.Ref, RefPrefix) && !seen[c.Dir+"\x00"+c.Ref] {
			seen[c.Dir+"\x00"+c.Ref] = true
			byDir[c.Dir] = append(byDir[c.Dir], c.Ref)
		}
	}
	for dir, refs := range byDir {
		if _, err := os.Stat(dir); err != nil {
			continue // the worktree is gone, and its refs with it
		}
		var in bytes.Buffer
		for _, r := range refs {
			fmt.Fprintf(&in, "delete %s\n", r)
		}
		if _, err := git(ctx, dir, nil, in.Bytes(), "update-ref", "--stdin"); err != nil {
			return err
		}
	}
	return nil
}
