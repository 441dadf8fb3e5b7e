//go:build linux

package matrix

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

const readOnlySrc = "| ID | Status | Description |\n|---|---|---|\n| 0000e1 | TODO | x |\n"

// A 0444 matrix is refused before any work, even for root (whom the kernel
// would let write it, and whose rename would replace it): the tree, lock
// file included, stays byte-identical.
func TestModifyRefusesReadOnlyMatrix(t *testing.T) {
	s := writeMatrix(t, readOnlySrc)
	if err := os.Chmod(s.Path, 0o444); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, filepath.Dir(s.Path))
	_, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow)
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), s.Path) || !strings.Contains(err.Error(), "chmod u+w") {
		t.Fatalf("err = %v, want ErrReadOnly naming the file and the fix", err)
	}
	if _, _, err := updateVia(s, context.Background(), "0000e1", Update{Status: Str("DONE")}, goldenNow); !errors.Is(err, ErrReadOnly) {
		t.Errorf("update: %v, want ErrReadOnly", err)
	}
	check()
	// A symlink to a read-only file is refused too.
	link := filepath.Join(t.TempDir(), "DEVELOPMENT_MATRIX.md")
	if err := os.Symlink(s.Path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := createVia(NewStore(link), context.Background(), Task{Description: "y"}, goldenNow); !errors.Is(err, ErrReadOnly) {
		t.Errorf("through a symlink: %v, want ErrReadOnly", err)
	}
	check()
	// Writable again, the same change goes through.
	if err := os.Chmod(s.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow); err != nil {
		t.Fatalf("after chmod u+w: %v", err)
	}
}

// A cancelled caller touches nothing: before the fix, the lock wait ran in a
// goroutine that created the lock file after Modify had returned.
func TestCancelledModifyCreatesNoLockFile(t *testing.T) {
	s := writeMatrix(t, readOnlySrc)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if _, err := createVia(s, ctx, Task{Description: "y"}, goldenNow); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	}
	time.Sleep(20 * time.Millisecond) // room for a stray goroutine to misbehave
	if _, err := os.Lstat(s.LockPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled Modify created %s (%v)", s.LockPath(), err)
	}
	assertUntouched(t, s, readOnlySrc)
}

const asUserEnv = "MATRIX_AS_USER"

// TestAsUserHelper is the writer process of TestReadOnlyForAnotherUser: it
// tries one change and prints the error.
func TestAsUserHelper(t *testing.T) {
	path := os.Getenv(asUserEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	_, err := createVia(NewStore(path), context.Background(), Task{Description: "y"}, goldenNow)
	switch {
	case errors.Is(err, ErrReadOnly):
		os.Stdout.WriteString("read-only: " + err.Error() + "\n")
	case err != nil:
		os.Stdout.WriteString("other: " + err.Error() + "\n")
	default:
		os.Stdout.WriteString("written\n")
	}
}

// As a user who may not write the file (0644, owned by someone else), or the
// folder (0555), the change is refused with ErrReadOnly and nothing changes.
// As root (root passes every access check), the writer runs as nobody.
func TestReadOnlyForAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		// Not root: this process is the other user; only the folder case applies.
		dir := openDir(t)
		s := NewStore(filepath.Join(dir, "DEVELOPMENT_MATRIX.md"))
		if err := os.WriteFile(s.Path, []byte(readOnlySrc), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		check := treehash.Guard(t, dir)
		if _, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "folder") {
			t.Errorf("read-only folder: %v, want ErrReadOnly naming the folder", err)
		}
		check()
		return
	}
	const nobody = 65534
	// The test binary lives in a 0700 build folder: copy it where nobody can run it.
	binDir := openDir(t)
	bin := filepath.Join(binDir, "matrix.test")
	copyFile(t, os.Args[0], bin, 0o755)
	run := func(path string) string {
		cmd := exec.Command(bin, "-test.run=^TestAsUserHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), asUserEnv+"="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("writer as nobody: %v\n%s", err, out)
		}
		return string(out)
	}
	for _, c := range []struct {
		name            string
		fileMode, dirMd os.FileMode
		want            string
	}{
		{"file owned by root, 0644", 0o644, 0o777, "cannot be written"},
		{"folder 0555", 0o666, 0o555, "folder"},
		{"both writable", 0o666, 0o777, "written"},
	} {
		dir := openDir(t)
		path := filepath.Join(dir, "DEVELOPMENT_MATRIX.md")
		if err := os.WriteFile(path, []byte(readOnlySrc), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.fileMode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, c.dirMd); err != nil {
			t.Fatal(err)
		}
		before, err := treehash.Snapshot(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := run(path)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: writer said %q, want %q", c.name, out, c.want)
		}
		if c.want == "written" {
			continue
		}
		if !strings.HasPrefix(out, "read-only: ") {
			t.Errorf("%s: %q is not ErrReadOnly", c.name, out)
		}
		after, _ := treehash.Snapshot(dir)
		if d := treehash.Diff(before, after); d != "" {
			t.Errorf("%s: the tree changed: %s", c.name, d)
		}
	}
}

// openDir is a temp folder every user can enter (t.TempDir's parent is 0700).
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "matrix-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755); _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
