package agentside

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/supervision/policy"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrOutside is a file path that leaves the workspace ("..", an absolute
// path elsewhere, a symlink out) or leads into git's own folders or
// agentinfra's control files: the workspace's one error for it, so every
// caller can test for the same.
var ErrOutside = workspace.ErrOutside

// ErrPatchConflict: the file is no longer what the diff was approved for.
var ErrPatchConflict = agenterr.New(agenterr.Conflict, "patch_conflict")

// absentHash is the hash of a file that does not exist (a diff creating it).
const absentHash = "absent"

// relPath turns the file of a request (relative to the workspace, or
// absolute inside it) into the slash path, relative to the workspace, of
// where it leads: the policy's one judgement of paths (policy.Place), which
// follows symlinks and "..". A path leading outside the workspace, into a
// .git folder at any depth (or a git directory a .git file links to), or
// to one of agentinfra's control files (.agent/config.yaml,
// .agent/policy.yaml, .agent/state/, the user's agentinfra folder) is
// refused with ErrOutside: no agent edits them through accept_diff. The
// write itself then goes through os.Root, so a symlink swapped in between
// still cannot lead it out.
func relPath(pol *policy.Policy, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", agenterr.Invalidf("file", "required: the file the diff changes, relative to the workspace")
	}
	if strings.ContainsRune(p, 0) {
		return "", agenterr.Invalidf("file", "a path cannot hold a NUL byte")
	}
	pl := pol.Place(p)
	switch {
	case pl.Never != "":
		return "", fmt.Errorf("%w: %s: %s (the workspace is %s); an agent does not edit it through accept_diff", ErrOutside, pl.Shown(), pl.Never, pol.Root)
	case pl.Rel == ".":
		return "", agenterr.Invalidf("file", "%q names the workspace itself, not a file", p)
	}
	return pl.Rel, nil
}

// readIn reads rel inside root through os.Root, so a symlink (of the file
// or of a folder on its way) that leads out of the workspace is refused.
// A missing file is (nil, false, nil).
func readIn(root *os.Root, rel string) (data []byte, exists bool, err error) {
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, outsideOr(rel, err)
	}
	if fi.IsDir() {
		return nil, false, agenterr.Invalidf("file", "%s is a folder, not a file", rel)
	}
	b, err := root.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		return nil, false, outsideOr(rel, err)
	}
	return b, true, nil
}

// outsideOr says ErrOutside for os.Root's "path escapes from parent".
func outsideOr(rel string, err error) error {
	if strings.Contains(err.Error(), "escapes") {
		return fmt.Errorf("%w: %s leads out of the workspace through a symlink", ErrOutside, rel)
	}
	return err
}

func hashOf(data []byte, exists bool) string {
	if !exists {
		return absentHash
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// parseDiff reads a unified diff of one file. A diff of bare hunks (no
// ---/+++ header) is given one naming rel.
func parseDiff(rel, diff string) (*gitdiff.File, error) {
	if strings.TrimSpace(diff) == "" {
		return nil, agenterr.Invalidf("diff", "required: a unified diff of the file (---/+++ header and @@ hunks, as `git diff` or `diff -u` print)")
	}
	if !strings.HasSuffix(diff, "\n") {
		diff += "\n"
	}
	if i := strings.Index(diff, "@@"); i >= 0 && !strings.Contains(diff[:i], "--- ") {
		diff = fmt.Sprintf("--- a/%s\n+++ b/%s\n%s", rel, rel, diff)
	}
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, agenterr.Invalidf("diff", "not a unified diff: %v", err)
	}
	switch {
	case len(files) == 0:
		return nil, agenterr.Invalidf("diff", "no change in it: a unified diff has ---/+++ lines and @@ hunks")
	case len(files) > 1:
		return nil, agenterr.Invalidf("diff", "it changes %d files: ask for one file per request", len(files))
	}
	f := files[0]
	if f.IsBinary || f.IsRename || f.IsCopy {
		return nil, agenterr.Invalidf("diff", "binary changes, renames and copies are not applied: send a text diff of one file")
	}
	return f, nil
}

// applyDiff is the file's content after f, or why it does not apply.
func applyDiff(f *gitdiff.File, cur []byte, exists bool) (out []byte, remove bool, err error) {
	switch {
	case f.IsNew && exists:
		return nil, false, fmt.Errorf("the diff creates the file, but it exists")
	case !f.IsNew && !exists && len(f.TextFragments) > 0 && f.TextFragments[0].OldLines > 0:
		return nil, false, fmt.Errorf("the diff changes the file, but it does not exist")
	}
	var b bytes.Buffer
	if err := gitdiff.Apply(&b, bytes.NewReader(cur), f); err != nil {
		return nil, false, err
	}
	return b.Bytes(), f.IsDelete, nil
}

// writeIn replaces rel inside root with data: a temporary file beside it,
// fsync, rename over it, fsync the folder — all through os.Root, so the
// write cannot be led out of the workspace. An existing file keeps its mode.
func writeIn(root *os.Root, rel string, data []byte) error {
	name := filepath.FromSlash(rel)
	dir := filepath.Dir(name)
	mode := fs.FileMode(0o644)
	if fi, err := root.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return outsideOr(rel, err)
	}
	var tmp string
	var f *os.File
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, fmt.Sprintf(".%s.agentinfra-%d-%d", filepath.Base(name), os.Getpid(), i))
		var err error
		if f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) || i > 100 {
			return outsideOr(rel, err)
		}
	}
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode) // the umask may have narrowed it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return outsideOr(rel, err)
	}
	if d, err := root.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
