package agentside

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRelPathRefusesWhatLeavesTheWorkspace(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"../x", "a/../../x", "a/..", `..`, "/etc/passwd", filepath.Join(filepath.Dir(root), "other", "x"),
		".git/config", ".git", "./.git/hooks/x"} {
		if rel, err := relPath(root, p); !errors.Is(err, ErrOutside) {
			t.Errorf("relPath(%q) = %q, %v; want ErrOutside", p, rel, err)
		}
	}
	for p, want := range map[string]string{"a/b.go": "a/b.go", "./a//b.go": "a/b.go", filepath.Join(root, "c", "d.txt"): "c/d.txt", ".github/x.yml": ".github/x.yml"} {
		if rel, err := relPath(root, p); err != nil || rel != want {
			t.Errorf("relPath(%q) = %q, %v; want %q", p, rel, err, want)
		}
	}
	if _, err := relPath(root, "."); err == nil {
		t.Error("the workspace itself was accepted as a file")
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
