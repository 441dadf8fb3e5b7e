package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/store"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), identity...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every file under root (but .git) with its mode and bytes (a
// symlink's target), to compare trees byte for byte.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, _ := d.Info()
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			m[rel] = "link -> " + target
			return nil
		}
		b, _ := os.ReadFile(p)
		m[rel] = info.Mode().String() + " " + string(b)
		return nil
	})
	return m
}

// A repository with a commit, files changed since, and new files deep in
// new folders (untracked), an executable, a symlink and an ignored file.
func world(t *testing.T) (string, *store.Store, store.Session) {
	t.Helper()
	root := t.TempDir()
	run(t, root, "git", "init", "-q", "-b", "main")
	write(t, root, "README.md", "# demo\n")
	write(t, root, "pkg/a/a.go", "package a\n")
	write(t, root, ".gitignore", "build/\n")
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "commit", "-q", "-m", "first")
	write(t, root, "pkg/a/a.go", "package a\n\nfunc A() {}\n") // modified, not staged
	write(t, root, "pkg/b/deep/er/b.go", "package er\n")       // untracked, nested
	write(t, root, "notes/todo.txt", "- ship it\n")
	write(t, root, "build/out.bin", "ignored")
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	os.Symlink("pkg/a/a.go", filepath.Join(root, "link.go"))
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ses, err := st.CreateSession(context.Background(), store.NewSession{Owner: "ana", Workspace: root, CLI: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	return root, st, ses
}

// The checkpoint holds the whole tree, nested and untracked files too,
// with a hash per file; the repository's index, HEAD and branches are as
// they were; the commit sits under the private ref only.
func TestCreateRecordsTheWholeTree(t *testing.T) {
	ctx := context.Background()
	root, st, ses := world(t)
	index, _ := os.ReadFile(filepath.Join(root, ".git", "index"))
	head := run(t, root, "git", "rev-parse", "HEAD")
	status := run(t, root, "git", "status", "--porcelain")

	c, err := Create(ctx, st, ses.ID, filepath.Join(root, "pkg"), "before the refactor", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != root || !strings.HasPrefix(c.Ref, RefPrefix) || c.Commit == "" || c.Label != "before the refactor" {
		t.Fatalf("checkpoint: %+v", c)
	}
	listed := run(t, root, "git", "ls-tree", "-r", "--name-only", c.Commit)
	for _, f := range []string{"README.md", "pkg/a/a.go", "pkg/b/deep/er/b.go", "notes/todo.txt", "run.sh", "link.go", ".gitignore"} {
		if !strings.Contains(listed, f+"\n") {
			t.Errorf("%s is not in the checkpoint:\n%s", f, listed)
		}
	}
	if strings.Contains(listed, "build/out.bin") {
		t.Error("an ignored file went into the checkpoint")
	}
	if got := run(t, root, "git", "show", c.Commit+":pkg/a/a.go"); got != "package a\n\nfunc A() {}\n" {
		t.Errorf("the modified file's checkpoint content: %q", got)
	}
	if !strings.Contains(c.Files, `"pkg/b/deep/er/b.go":"100644:`) || !strings.Contains(c.Files, `"run.sh":"100755:`) || !strings.Contains(c.Files, `"link.go":"120000:`) {
		t.Errorf("file hashes: %s", c.Files)
	}
	after, _ := os.ReadFile(filepath.Join(root, ".git", "index"))
	if !bytes.Equal(index, after) || run(t, root, "git", "rev-parse", "HEAD") != head || run(t, root, "git", "status", "--porcelain") != status {
		t.Error("taking a checkpoint changed the repository's index, HEAD or status")
	}
	if branches := run(t, root, "git", "branch", "-a"); strings.Contains(branches, "agentinfra") {
		t.Errorf("a branch appeared: %s", branches)
	}
	if got, _ := st.Checkpoints(ctx, ses.ID); len(got) != 1 || got[0].Commit != c.Commit {
		t.Fatalf("list: %+v", got)
	}
}

// A file changed afterwards is listed as diverged and restore refuses
// without force; with it the tree matches the checkpoint byte for byte.
func TestRestoreRefusesDivergedWithoutForce(t *testing.T) {
	ctx := context.Background()
	root, st, ses := world(t)
	want := snapshot(t, root)
	c, err := Create(ctx, st, ses.ID, root, "good", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Diverged(ctx, c); err != nil || len(d) != 0 {
		t.Fatalf("right after the checkpoint: %v %v", d, err)
	}
	// The agent breaks things.
	write(t, root, "pkg/b/deep/er/b.go", "package er // broken\n")
	os.Remove(filepath.Join(root, "notes/todo.txt"))
	os.Remove(filepath.Join(root, "notes"))
	write(t, root, "pkg/c/new/c.go", "package c\n")
	os.Chmod(filepath.Join(root, "run.sh"), 0o644)
	write(t, root, "build/out.bin", "ignored, rebuilt")

	d, err := Diverged(ctx, c)
	wantD := []Change{{"notes/todo.txt", "deleted"}, {"pkg/b/deep/er/b.go", "modified"}, {"pkg/c/new/c.go", "added"}, {"run.sh", "modified"}}
	if err != nil || !reflect.DeepEqual(d, wantD) {
		t.Fatalf("diverged: %v %v, want %v", d, err, wantD)
	}
	before := snapshot(t, root)
	_, err = Restore(ctx, st, c, RestoreOptions{By: "ana", Surface: store.SurfaceTerminal})
	var de *DivergedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), "modified pkg/b/deep/er/b.go") {
		t.Fatalf("restore without force: %v", err)
	}
	if !reflect.DeepEqual(snapshot(t, root), before) {
		t.Fatal("a refused restore changed the tree")
	}
	changed, err := Restore(ctx, st, c, RestoreOptions{Force: true, By: "ana", Surface: store.SurfaceTerminal})
	if err != nil || len(changed) != 4 {
		t.Fatalf("restore with force: %v %v", changed, err)
	}
	got := snapshot(t, root)
	want["build/out.bin"] = got["build/out.bin"] // ignored: not the checkpoint's business
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after restore the tree differs:\n got %v\nwant %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "pkg/c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder of a file created since is left: %v", err)
	}
	if got := snapshot(t, root)["build/out.bin"]; !strings.Contains(got, "rebuilt") {
		t.Errorf("the ignored file was touched: %q", got)
	}
	evs, _ := st.Audit(ctx, ses.ID)
	if last := evs[len(evs)-1]; last.Action != "checkpoint_restored" || !strings.Contains(string(last.Detail), "pkg/c/new/c.go") {
		t.Errorf("audit: %+v", last)
	}
}

// Retention deletes the refs of purged checkpoints.
func TestDeleteRefs(t *testing.T) {
	ctx := context.Background()
	root, st, ses := world(t)
	c, err := Create(ctx, st, ses.ID, root, "", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if err := DeleteRefs(ctx, []store.Checkpoint{c, c}); err != nil {
		t.Fatal(err)
	}
	if refs := run(t, root, "git", "for-each-ref", RefPrefix); refs != "" {
		t.Fatalf("refs left: %s", refs)
	}
	if err := DeleteRefs(ctx, []store.Checkpoint{c}); err != nil {
		t.Fatalf("deleting a ref already gone: %v", err)
	}
}

func TestNotARepository(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = Create(context.Background(), st, 1, t.TempDir(), "", "ana")
	if err == nil || !strings.Contains(err.Error(), "checkpoints need a git repository") {
		t.Fatalf("not a repository: %v", err)
	}
}
