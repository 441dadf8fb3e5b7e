//go:build unix

package matrix

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// The editor tests run a second process that writes the matrix the way an
// editor does, without the lock: in place (open with O_TRUNC, write, close;
// here in two pieces, as a slow disk or a large file makes any editor do),
// or by rename (write a new file next to it, rename it over the matrix, as
// sed -i, vim's default and most IDEs do). TestHelperProcess runs it:
// editorProcess below.

const editorSeed = "# Editor matrix\n\n" + CanonicalHeader +
	"| 0000e1 | TODO | P1 | med | coder | | | First task, the one agentinfra changes | 2026-01-01 | 2026-01-01 |\n" +
	"| 0000e2 | TODO | P2 | easy | | | | Second task with a longer description so that a cut falls inside it | 2026-01-01 | 2026-01-01 |\n" +
	"| 0000e3 | DONE | P3 | easy | | | | Third task | 2026-01-01 | 2026-01-01 |\n" +
	"\n## Notes\n\ncounter: 0\n\nThe end of the prose, which a torn write loses first.\n"

// editorProcess is the editor: it reads the file, replaces EDIT_FROM with
// EDIT_TO, says "read", and on each line from stdin does the next step of
// its save, saying what it did.
func editorProcess(mode, path string) error {
	in := bufio.NewScanner(os.Stdin)
	next := func() bool { return in.Scan() }
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := strings.Replace(string(src), os.Getenv("EDIT_FROM"), os.Getenv("EDIT_TO"), 1)
	fmt.Println("read")
	if !next() {
		return nil
	}
	switch mode {
	case "editor-inplace":
		fmt.Println("opening")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		cut := len(s)
		if c := os.Getenv("EDIT_CUT"); c != "" {
			cut = strings.Index(s, c)
		}
		if _, err := f.WriteString(s[:cut]); err != nil {
			return err
		}
		fmt.Println("half")
		if cut < len(s) {
			if !next() {
				return nil
			}
			if _, err := f.WriteString(s[cut:]); err != nil {
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	case "editor-rename":
		tmp := filepath.Join(filepath.Dir(path), ".editor-save.tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	fmt.Println("done")
	return nil
}

type editor struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	errb  bytes.Buffer
}

func startEditor(t *testing.T, mode, path, from, to string, extra ...string) *editor {
	t.Helper()
	ed := &editor{t: t, cmd: helperCmd(context.Background(), mode, path, append([]string{"EDIT_FROM=" + from, "EDIT_TO=" + to}, extra...)...)}
	ed.cmd.Stderr = &ed.errb
	var err error
	if ed.stdin, err = ed.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := ed.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ed.out = bufio.NewReader(stdout)
	if err := ed.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ed.cmd.Process.Kill(); _ = ed.cmd.Wait() })
	ed.expect("read")
	return ed
}

// step tells the editor to go on; expect waits for what it says.
func (ed *editor) step() {
	if _, err := io.WriteString(ed.stdin, "go\n"); err != nil {
		ed.t.Errorf("editor: %v", err)
	}
}

func (ed *editor) expect(word string) {
	ed.t.Helper()
	line, err := ed.out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != word {
		ed.t.Fatalf("editor said %q (%v), want %q\n%s", line, err, word, ed.errb.String())
	}
}

// afterBoth is the file with the editor's change and then agentinfra's.
func afterBoth(t *testing.T, src, from, to string, fn func(d *Doc) error) string {
	t.Helper()
	d := Parse([]byte(strings.Replace(src, from, to, 1)))
	if err := fn(d); err != nil {
		t.Fatal(err)
	}
	return string(d.Bytes())
}

func blockFirst(d *Doc) error {
	_, err := d.UpdateTask("0000e1", Update{Status: Str("BLOCKED")}, goldenNow)
	return err
}

func setVar[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// Issue 18, item 1: an editor that saves in place (truncate, then write in
// two pieces) while agentinfra updates. Before, agentinfra read the half
// file and renamed it into place with its change, and the editor's second
// half went into the unlinked old file: the end of the matrix was lost.
// Now the writer waits until the editor has closed the file (with a read
// lease) or, without a lease, until a file cut in the middle of a row has
// settled; the result holds both changes.
func TestInPlaceEditorSaveIsWaitedFor(t *testing.T) {
	for _, lease := range []bool{true, false} {
		t.Run(fmt.Sprintf("lease=%v", lease), func(t *testing.T) {
			setVar(t, &noLease, !lease)
			waiting := make(chan string, 100)
			setVar(t, &testHookWaiting, func(why string) {
				select {
				case waiting <- why:
				default:
				}
			})
			s := writeMatrix(t, editorSeed)
			if lease && !leaseWorks(t, s.Path) {
				t.Skip("no leases on this file system")
			}
			const from, to = "counter: 0", "counter: 1 (IMPORTANT)"
			ed := startEditor(t, "editor-inplace", s.Path, from, to, "EDIT_CUT=with a longer description")
			ed.step()
			ed.expect("opening")
			ed.expect("half") // the file now ends in the middle of row 0000e2
			errc := make(chan error, 1)
			go func() { _, err := s.Modify(context.Background(), blockFirst); errc <- err }()
			why := <-waiting // the writer is waiting for the editor
			ed.step()
			ed.expect("done")
			if err := <-errc; err != nil {
				t.Fatalf("update: %v", err)
			}
			got, _ := os.ReadFile(s.Path)
			if want := afterBoth(t, editorSeed, from, to, blockFirst); string(got) != want {
				t.Fatalf("the matrix lost an edit:\n%s\nwant\n%s", got, want)
			}
			t.Logf("the writer waited because the matrix %s", why)
		})
	}
}

// leaseWorks reports whether this process can take a read lease on path.
func leaseWorks(t *testing.T, path string) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return takeReadLease(f) == leaseHeld
}

// Issue 18, item 2: an editor that saves by rename between agentinfra's read
// and its rename. Before, agentinfra's rename replaced the editor's file,
// silently. Now the file that comes out of the exchange is checked: it is
// the editor's, so the exchange is undone and the update runs again on the
// editor's version. Without the exchange (other systems), the check just
// before the rename sees the editor's file.
func TestRenameEditorSaveBeforeTheReplaceIsKept(t *testing.T) {
	for _, exch := range []bool{true, false} {
		t.Run(fmt.Sprintf("exchange=%v", exch), func(t *testing.T) {
			setVar(t, &noExchange, !exch)
			s := writeMatrix(t, editorSeed)
			const from, to = "counter: 0", "counter: 1 (IMPORTANT)"
			var once sync.Once
			setVar(t, &testHookBeforeExchange, func(*os.File) {
				once.Do(func() { // the editor saves between the last check and the exchange
					ed := startEditor(t, "editor-rename", s.Path, from, to)
					ed.step()
					ed.expect("done")
				})
			})
			if _, err := s.Modify(context.Background(), blockFirst); err != nil {
				t.Fatalf("update: %v", err)
			}
			got, _ := os.ReadFile(s.Path)
			editorVersion := strings.Replace(editorSeed, from, to, 1)
			if want := afterBoth(t, editorSeed, from, to, blockFirst); string(got) != want {
				t.Fatalf("the matrix lost an edit:\n%s\nwant\n%s", got, want)
			}
			if prev, _ := os.ReadFile(s.PrevPath()); string(prev) != editorVersion {
				t.Errorf("the previous version is not the editor's save:\n%s", prev)
			}
			assertNoTemps(t, s)
		})
	}
}

// An editor that starts to save in place while agentinfra swaps its new file
// in: its open of the old file waits for agentinfra's lease, which sees the
// break and swaps the old file back, so that the editor writes into the
// matrix; agentinfra then waits for the editor and applies its change to the
// editor's version.
func TestInPlaceEditorOpeningDuringTheReplaceIsKept(t *testing.T) {
	s := writeMatrix(t, editorSeed)
	if !leaseWorks(t, s.Path) {
		t.Skip("no leases on this file system")
	}
	const from, to = "counter: 0", "counter: 1 (IMPORTANT)"
	ed := startEditor(t, "editor-inplace", s.Path, from, to)
	var once sync.Once
	setVar(t, &testHookBeforeExchange, func(read *os.File) {
		once.Do(func() {
			ed.step() // the editor opens the file: the kernel holds its open for the lease
			ed.expect("opening")
			poll.Eventually(t, func() bool { return leaseBroken(read) }, "the editor's open never broke the lease")
		})
	})
	if _, err := s.Modify(context.Background(), blockFirst); err != nil {
		t.Fatalf("update: %v", err)
	}
	ed.expect("half")
	ed.expect("done")
	got, _ := os.ReadFile(s.Path)
	if want := afterBoth(t, editorSeed, from, to, blockFirst); string(got) != want {
		t.Fatalf("the matrix lost an edit:\n%s\nwant\n%s", got, want)
	}
	assertNoTemps(t, s)
}

// What no check can stop (an editor writing into the old file after it was
// replaced) is not lost: the old file is the previous version, and the next
// write keeps it aside and says so.
func TestEditIntoThePreviousVersionIsKeptAndSaid(t *testing.T) {
	s := writeMatrix(t, editorSeed)
	if _, err := s.Modify(context.Background(), blockFirst); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.PrevPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("A line an editor saved into the old file.\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var notes []string
	s.Notify = func(m string) { notes = append(notes, m) }
	if _, _, err := updateVia(s, context.Background(), "0000e2", Update{Status: Str("DONE")}, goldenNow); err != nil {
		t.Fatal(err)
	}
	aside, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path), ".DEVELOPMENT_MATRIX.md.recovered-*"))
	if len(aside) != 1 || len(notes) != 1 || !strings.Contains(notes[0], aside[0]) {
		t.Fatalf("kept aside %v, notices %q", aside, notes)
	}
	if b, _ := os.ReadFile(aside[0]); !strings.HasSuffix(string(b), "A line an editor saved into the old file.\n") {
		t.Errorf("%s does not hold the editor's edit:\n%s", aside[0], b)
	}
}

// An editor that never closes the file: the writer gives up at the timeout
// and writes nothing.
func TestFileKeptOpenForWritingIsRefused(t *testing.T) {
	s := writeMatrix(t, editorSeed)
	if !leaseWorks(t, s.Path) {
		t.Skip("no leases on this file system")
	}
	ed := startEditor(t, "editor-inplace", s.Path, "x", "x", "EDIT_CUT=The end of the prose")
	ed.step()
	ed.expect("opening")
	ed.expect("half") // the file stays open for writing
	s.LockTimeout = 300 * time.Millisecond
	_, err := s.Modify(context.Background(), blockFirst)
	if !errors.Is(err, ErrConcurrentEdit) || !strings.Contains(err.Error(), "open for writing by another program") {
		t.Fatalf("err = %v, want ErrConcurrentEdit saying the file is open for writing", err)
	}
	ed.step()
	ed.expect("done")
	got, _ := os.ReadFile(s.Path)
	if string(got) != strings.Replace(editorSeed, "x", "x", 1) {
		t.Errorf("the matrix is not the editor's:\n%s", got)
	}
	assertNoTemps(t, s)
}

func assertNoTemps(t *testing.T, s *Store) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(s.Path))
	for _, e := range entries {
		switch e.Name() {
		case filepath.Base(s.Path), filepath.Base(s.LockPath()), filepath.Base(s.PrevPath()):
		default:
			t.Errorf("stray file %s next to the matrix", e.Name())
		}
	}
}
