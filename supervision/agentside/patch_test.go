package agentside

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/supervision/policy"
)

func TestRelPathRefusesWhatLeavesTheWorkspace(t *testing.T) {
	root := t.TempDir()
	pol := &policy.Policy{Root: root}
	for _, p := range []string{"../x", "a/../../x", `..`, "/etc/passwd", filepath.Join(filepath.Dir(root), "other", "x"),
		".git/config", ".git", "./.git/hooks/x"} {
		if rel, err := relPath(pol, p); !errors.Is(err, ErrOutside) {
			t.Errorf("relPath(%q) = %q, %v; want ErrOutside", p, rel, err)
		}
	}
	for p, want := range map[string]string{"a/b.go": "a/b.go", "./a//b.go": "a/b.go", filepath.Join(root, "c", "d.txt"): "c/d.txt",
		".github/x.yml": ".github/x.yml", "a/../b.go": "b.go"} {
		if rel, err := relPath(pol, p); err != nil || rel != want {
			t.Errorf("relPath(%q) = %q, %v; want %q", p, rel, err, want)
		}
	}
	for _, p := range []string{".", "a/.."} {
		if _, err := relPath(pol, p); err == nil || errors.Is(err, ErrOutside) {
			t.Errorf("relPath(%q): %v, want the workspace itself refused as a file", p, err)
		}
	}
}

// Issue 27, items 1 and 8: accept_diff judges where a path leads, with the
// policy's own judgement. A nested repository's hook, a .git folder reached
// through a committed symlink, a git directory a .git file links to, and
// agentinfra's own config (operators: ["@agentbot"]) are refused; before,
// only a .git first element was.
func TestRelPathRefusesGitAndControlFilesAtAnyDepth(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "sub/.git/hooks", "docs", "gitstore/objects", "gitstore/refs", "wt", ".agent/state"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "gitstore", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(root, "wt", ".git"), []byte("gitdir: ../gitstore\n"), 0o644)
	if err := os.Symlink("../.git", filepath.Join(root, "docs", "gitdir")); err != nil {
		t.Fatal(err)
	}
	pol := &policy.Policy{Root: root, Paths: policy.DefaultPaths(root, func(k string) string {
		if k == "AGENTINFRA_CONFIG_DIR" {
			return filepath.Join(root, "userconf")
		}
		return ""
	})}
	for p, want := range map[string]string{
		"sub/.git/hooks/post-checkout": "inside a .git folder",
		"docs/gitdir/config":           "docs/gitdir/config → .git/config",
		"docs/gitdir/hooks/pre-commit": "inside a .git folder",
		"gitstore/hooks/post-checkout": "inside the git directory gitstore",
		"wt/.git":                      "inside a .git folder",
		".agent/config.yaml":           "control file .agent/config.yaml",
		".agent/policy.yaml":           "control file .agent/policy.yaml",
		".agent/state/agentinfra.db":   "control file .agent/state",
		"userconf/allowlist.yaml":      "agentinfra's own configuration",
	} {
		rel, err := relPath(pol, p)
		if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), want) {
			t.Errorf("relPath(%q) = %q, %v; want ErrOutside saying %q", p, rel, err, want)
		}
	}
	if rel, err := relPath(pol, ".agent/agents/dev.md"); err != nil || rel != ".agent/agents/dev.md" {
		t.Errorf("a mode file: %q %v", rel, err)
	}
}

// A symlink out of the workspace is refused at the read and at the write,
// whichever element of the path it is.
func TestSymlinkOutIsRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "file.txt")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rel := range []string{"dir/secret.txt", "file.txt"} {
		if _, _, err := readIn(r, rel); !errors.Is(err, ErrOutside) {
			t.Errorf("readIn(%s): %v", rel, err)
		}
	}
	if err := writeIn(r, "dir/new.txt", []byte("x")); !errors.Is(err, ErrOutside) {
		t.Errorf("writeIn through a symlinked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
}

func TestApplyDiffKinds(t *testing.T) {
	root := t.TempDir()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A new file in a new folder (git's "new file" diff), with its mode.
	f, err := parseDiff("pkg/new.go", "diff --git a/pkg/new.go b/pkg/new.go\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/new.go\n@@ -0,0 +1,2 @@\n+package pkg\n+\n")
	if err != nil {
		t.Fatal(err)
	}
	out, remove, err := applyDiff(f, nil, false)
	if err != nil || remove || string(out) != "package pkg\n\n" {
		t.Fatalf("new file: %q %v %v", out, remove, err)
	}
	if err := writeIn(r, "pkg/new.go", out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "pkg", "new.go")); string(b) != "package pkg\n\n" {
		t.Fatalf("written: %q", b)
	}
	if _, _, err := applyDiff(f, out, true); err == nil {
		t.Error("a diff creating a file applied to an existing one")
	}
	// Bare hunks get a header; context that does not match is refused.
	f, err = parseDiff("a.txt", "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n")
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := applyDiff(f, []byte("one\ntwo\nthree\n"), true); err != nil || string(out) != "one\nTWO\nthree\n" {
		t.Fatalf("bare hunk: %q %v", out, err)
	}
	if _, _, err := applyDiff(f, []byte("one\nzwei\nthree\n"), true); err == nil {
		t.Error("a hunk applied to other lines")
	}
	// Two files in one diff are refused.
	if _, err := parseDiff("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-a\n+b\n"); err == nil {
		t.Error("a diff of two files was accepted")
	}
	// An executable keeps its mode when replaced.
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	if err := writeIn(r, "run.sh", []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after the write: %v", fi.Mode())
	}
}
