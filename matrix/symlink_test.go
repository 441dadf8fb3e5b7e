//go:build linux

package matrix

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// Issue 18, item 3: a symlinked matrix was locked at the link, not at the
// file, so writers through two paths to one file did not exclude each other
// (40 of 80 creates lost). Now every path locks the resolved file: writer
// processes half through a link, half through the file itself, lose nothing.
func TestWritersThroughALinkAndTheFileShareOneLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	root := t.TempDir()
	real := filepath.Join(root, "docs", "MATRIX.md")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(concurrentSeed), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../docs/MATRIX.md", link); err != nil {
		t.Fatal(err)
	}
	if got, want := NewStore(link).LockPath(), NewStore(real).LockPath(); got != want {
		t.Fatalf("lock through the link %s, through the file %s: want one lock", got, want)
	}
	const writers = 20
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var procs []*exec.Cmd
	var stdins []io.Closer
	var errs []*bytes.Buffer
	for i := range writers {
		path := real
		if i%2 == 0 {
			path = link
		}
		cmd := helperCmd(ctx, "concurrent", path, "MATRIX_N="+strconv.Itoa(i))
		var eb bytes.Buffer
		cmd.Stderr = &eb
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, stdins, errs = append(procs, cmd), append(stdins, in), append(errs, &eb)
	}
	for _, in := range stdins {
		in.Close()
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, errs[i])
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v %v", fi, err)
	}
	d, err := NewStore(real).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Tasks()); n != writers+1 {
		t.Errorf("%d tasks, want %d: writes were lost", n, writers+1)
	}
	if shared, _ := d.Task("5a5a5a"); len(shared.Agents) != writers {
		t.Errorf("the shared task names %d writers, want %d", len(shared.Agents), writers)
	}
}

// A matrix that resolves outside the workspace is refused, reading and
// writing, and nothing outside is touched: not the file, not its folder's
// files that look like a temporary file of ours.
func TestMatrixLinkedOutsideTheWorkspaceIsRefused(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "DEVELOPMENT_MATRIX.md")
	if err := os.WriteFile(target, []byte(readOnlySrc), 0o644); err != nil {
		t.Fatal(err)
	}
	bystander := filepath.Join(outside, ".DEVELOPMENT_MATRIX.md123")
	if err := os.WriteFile(bystander, []byte("someone else's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	link := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, outside)
	s := NewStore(link)
	s.Root = root
	_, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow)
	if !errors.Is(err, ErrOutsideWorkspace) || !strings.Contains(err.Error(), target) {
		t.Fatalf("write: %v, want ErrOutsideWorkspace naming %s", err, target)
	}
	if _, err := s.Load(context.Background()); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("read: %v, want ErrOutsideWorkspace", err)
	}
	check()
	// A link that stays inside the workspace is fine.
	inside := filepath.Join(root, "MATRIX.md")
	if err := os.WriteFile(inside, []byte(readOnlySrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../MATRIX.md", link); err != nil {
		t.Fatal(err)
	}
	if _, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow); err != nil {
		t.Fatalf("a link inside the workspace: %v", err)
	}
	if b, _ := os.ReadFile(inside); !strings.Contains(string(b), "| y |") {
		t.Errorf("the linked file was not written:\n%s", b)
	}
}

// Issue 18, item 14: a lock file that is a symbolic link was followed (a
// link could make agentinfra create or lock any file). Now it is refused,
// saying what to do, and the link's target is not created or touched.
func TestLockFileThatIsALinkIsRefused(t *testing.T) {
	s := writeMatrix(t, readOnlySrc)
	elsewhere := filepath.Join(t.TempDir(), "victim")
	if err := os.Symlink(elsewhere, s.LockPath()); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, filepath.Dir(s.Path))
	_, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow)
	if !errors.Is(err, ErrLockFile) || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("err = %v, want ErrLockFile saying it is a link and to remove it", err)
	}
	check()
	if _, err := os.Lstat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was created: %v", err)
	}
	// A folder in its place is refused at once, not after the lock timeout.
	if err := os.Remove(s.LockPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.LockPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = createVia(s, context.Background(), Task{Description: "y"}, goldenNow)
	if !errors.Is(err, ErrLockFile) || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("err = %v, want ErrLockFile saying it is a folder", err)
	}
	t.Logf("refused in %v", time.Since(start))
}

// Issue 18, item 14: the lock-timeout message advised removing the lock file,
// which flock never needs and which lets a second writer in beside a live
// one. It now says to wait, and not to remove it.
func TestLockTimeoutDoesNotAdviseRemovingTheLockFile(t *testing.T) {
	s := writeMatrix(t, readOnlySrc)
	holder := helperCmd(context.Background(), "hold-lock", s.Path)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = holder.Wait() }()
	if b := make([]byte, 7); func() bool { _, err := io.ReadFull(stdout, b); return err != nil || string(b) != "locked\n" }() {
		t.Fatal("the holder did not lock")
	}
	s.LockTimeout = 100 * time.Millisecond
	_, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("err = %v, want ErrLockTimeout", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "or remove the lock file") || !strings.Contains(msg, "do not remove the lock file") || !strings.Contains(msg, "AGENTINFRA_LOCK_TIMEOUT") {
		t.Errorf("message %q: want it to say not to remove the lock file, and how to wait longer", msg)
	}
}

// Issue 18, item 5: a write as root (sudo, an agent container on a bind
// mount) left the matrix root's, and its owner's next write was refused
// with "chmod u+w", the wrong cure. Root's write now keeps the owner, group
// and mode; a file that another user owns is refused naming the owner.
func TestRootWriteKeepsOwnerAndMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file to another user")
	}
	const nobody = 65534
	s := writeMatrix(t, readOnlySrc)
	if err := os.Chown(s.Path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := createVia(s, context.Background(), Task{Description: "y"}, goldenNow); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != nobody || st.Gid != nobody || fi.Mode().Perm() != 0o640 {
		t.Errorf("after root's write: uid %d gid %d mode %04o, want %d %d 0640", st.Uid, st.Gid, fi.Mode().Perm(), nobody, nobody)
	}
}

func TestOwnershipRefusalNamesTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file someone else's")
	}
	// As nobody, a matrix that root owns (0644): ownership, not the mode.
	dir := openDir(t)
	path := filepath.Join(dir, "DEVELOPMENT_MATRIX.md")
	if err := os.WriteFile(path, []byte(readOnlySrc), 0o644); err != nil {
		t.Fatal(err)
	}
	binDir := openDir(t)
	bin := filepath.Join(binDir, "matrix.test")
	copyFile(t, os.Args[0], bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestAsUserHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), asUserEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "belongs to user root") || strings.Contains(string(out), "chmod") {
		t.Errorf("as nobody: %s; want the owner named, and no chmod advice", out)
	}
}

// Restore brings the previous version back, and a second restore undoes
// the first: no version is ever lost by restoring.
func TestRestoreSwapsWithThePreviousVersion(t *testing.T) {
	s := writeMatrix(t, readOnlySrc)
	ctx := context.Background()
	if _, err := s.Previous(); !errors.Is(err, ErrNoPrevious) {
		t.Fatalf("before any write: %v, want ErrNoPrevious", err)
	}
	if _, _, err := updateVia(s, ctx, "0000e1", Update{Status: Str("DONE")}, goldenNow); err != nil {
		t.Fatal(err)
	}
	updated, _ := os.ReadFile(s.Path)
	d, replaced, err := s.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Bytes()) != readOnlySrc || !bytes.Equal(replaced, updated) {
		t.Fatalf("restored %q replacing %q", d.Bytes(), replaced)
	}
	if got, _ := os.ReadFile(s.Path); string(got) != readOnlySrc {
		t.Errorf("the file after restore:\n%s", got)
	}
	if prev, _ := s.Previous(); !bytes.Equal(prev, updated) {
		t.Errorf("the previous version after restore is not the version it replaced:\n%s", prev)
	}
	if _, _, err := s.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(s.Path); !bytes.Equal(got, updated) {
		t.Errorf("a second restore did not undo the first:\n%s", got)
	}
}
