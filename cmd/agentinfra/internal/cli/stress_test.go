//go:build linux

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Issue 18, "Must show": agentinfra writers (real processes, each updating
// its own row again and again) and two editors that take no lock (one saves
// in place, one by rename) change the matrix at once. Every edit lands or is
// reported: a writer's update exits 0 only if it is in the file (its last
// accepted value must be its row's value at the end), and the editors,
// which save the way a careful editor does (checking the file did not
// change since they read it, as vim does), redo a save that did not land.
// At the end the file must be, byte for byte, the replay of the accepted
// edits on the first version: no byte of the matrix is lost.
//
// The two editors serialize between themselves with a lock of their own
// (editors.lock; an editor against an editor is not agentinfra's business),
// and number their lines in the order they saved.
//
// A small run by default; AGENTINFRA_STRESS=1 runs 6 writers × 40 updates
// and 150 saves per editor.

const editorModeEnv = "AGENTINFRA_TEST_EDITOR"

// TestEditorHelper is an editor process of TestStressWritersAndEditors.
func TestEditorHelper(t *testing.T) {
	mode := os.Getenv(editorModeEnv)
	if mode == "" {
		t.Skip("editor process of the stress test")
	}
	saves, _ := strconv.Atoi(os.Getenv("EDITOR_SAVES"))
	redone, err := runEditor(mode, os.Getenv("EDITOR_MATRIX"), os.Getenv("EDITOR_LOCK"), saves)
	if err != nil {
		fmt.Fprintln(os.Stderr, "editor:", err)
		os.Exit(1)
	}
	fmt.Println(redone)
	os.Exit(0)
}

// runEditor appends saves lines "- edit N by MODE" to the matrix, N from a
// counter kept next to the editors' lock. It returns how many saves it had
// to redo because the file changed under it.
func runEditor(mode, path, lockPath string, saves int) (redone int, err error) {
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	for range saves {
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
			return redone, err
		}
		counter := lockPath + ".n"
		b, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		n++
		for {
			ok, err := saveOnce(mode, path, fmt.Sprintf("- edit %d by %s\n", n, mode))
			if err != nil {
				return redone, err
			}
			if ok {
				break
			}
			redone++
		}
		if err := os.WriteFile(counter, []byte(strconv.Itoa(n)), 0o644); err != nil {
			return redone, err
		}
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
			return redone, err
		}
		time.Sleep(time.Duration(n%7) * time.Millisecond)
	}
	return redone, nil
}

// saveOnce reads the file, appends line and saves it; ok is false when the
// file changed between the read and the save (nothing was lost: the caller
// reads again).
func saveOnce(mode, path, line string) (ok bool, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var read unix.Stat_t
	if err := unix.Stat(path, &read); err != nil {
		return false, err
	}
	data := append(src, line...)
	same := func(st *unix.Stat_t) bool {
		return st.Ino == read.Ino && st.Size == read.Size && st.Mtim == read.Mtim && st.Size == int64(len(src))
	}
	switch mode {
	case "inplace":
		// Open without truncating, check it is still what was read, then
		// truncate and write in two pieces (a save that takes a moment).
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return false, err
		}
		defer f.Close()
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return false, err
		}
		// The file opened must be the matrix still: an open that waited for
		// agentinfra's lease may have got the file agentinfra just replaced.
		var at unix.Stat_t
		if !same(&st) || unix.Stat(path, &at) != nil || at.Ino != st.Ino {
			return false, nil
		}
		if err := f.Truncate(0); err != nil {
			return false, err
		}
		half := len(data) / 2
		if _, err := f.WriteAt(data[:half], 0); err != nil {
			return false, err
		}
		time.Sleep(time.Millisecond)
		if _, err := f.WriteAt(data[half:], int64(half)); err != nil {
			return false, err
		}
		return true, f.Close()
	case "rename":
		// Write the new file, check the old one is still what was read,
		// swap them in one step, and check that what came out is what was
		// read; if not (a write landed in between), swap back.
		dir := filepath.Dir(path)
		tmp := filepath.Join(dir, ".editor-save")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return false, err
		}
		defer os.Remove(tmp)
		var now unix.Stat_t
		if err := unix.Stat(path, &now); err != nil || !same(&now) {
			return false, err
		}
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
			return false, err
		}
		var out unix.Stat_t
		if err := unix.Stat(tmp, &out); err != nil {
			return false, err
		}
		if out.Ino != read.Ino {
			return false, unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown editor %q", mode)
}

func TestStressWritersAndEditors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	writers, updates, saves := 2, 8, 10
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		writers, updates, saves = 6, 40, 150
	}
	bin := taskBinary(t)
	root := t.TempDir()
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(root)
	ids := make([]string, writers)
	for i := range ids {
		c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: fmt.Sprintf("row of writer %d", i), Mode: "coder"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.Task.ID
	}
	// Prose before and after the table, as people write it.
	src := "# Matrix under stress\r\n\r\nPeople and agents both edit this file.\r\n\r\n" + readText(t, ws.MatrixPath())[len("# Development Matrix"):] +
		"\n## Editor log\n\nThe editors append below; agentinfra must keep every line.\n\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	first := []byte(src)

	lockPath := filepath.Join(t.TempDir(), "editors.lock")
	var wg sync.WaitGroup
	type editorResult struct {
		mode   string
		redone string
		err    error
	}
	edResults := make(chan editorResult, 2)
	for _, mode := range []string{"inplace", "rename"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestEditorHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), editorModeEnv+"="+mode, "EDITOR_MATRIX="+ws.MatrixPath(), "EDITOR_LOCK="+lockPath, "EDITOR_SAVES="+strconv.Itoa(saves))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("%v\n%s", err, stderr.String())
			}
			edResults <- editorResult{mode, strings.TrimSpace(string(out)), err}
		}()
	}
	type writerResult struct {
		accepted    string // the last value that exited 0
		ok, refused int
		notes       []string
	}
	results := make([]writerResult, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			r.accepted = fmt.Sprintf("row of writer %d", w)
			for k := range updates {
				v := fmt.Sprintf("writer %d, update %d", w, k)
				cmd := exec.Command(bin, "task", "update", ids[w], "--description", v)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "AGENTINFRA_ROOT="+root, task.EnvLockTimeout+"=2m")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				switch {
				case err == nil:
					r.accepted = v
					r.ok++
				case errors.As(err, new(*exec.ExitError)):
					r.refused++ // reported: exit 1 with a message
					r.notes = append(r.notes, strings.TrimSpace(stderr.String()))
				default:
					t.Errorf("writer %d: %v", w, err)
				}
				if s := stderr.String(); strings.Contains(s, "warning:") {
					r.notes = append(r.notes, strings.TrimSpace(s))
				}
			}
		}()
	}
	wg.Wait()
	close(edResults)
	for e := range edResults {
		if e.err != nil {
			t.Fatalf("editor %s: %v", e.mode, e.err)
		}
		t.Logf("editor %s: %d saves, %s redone because the file changed under it", e.mode, saves, e.redone)
	}

	// The replay: the editors' lines in their order, then each writer's
	// last accepted description on the first version.
	want := string(first)
	for n := 1; n <= 2*saves; n++ {
		got := readText(t, ws.MatrixPath())
		mode := "inplace"
		if !strings.Contains(got, fmt.Sprintf("- edit %d by inplace\n", n)) {
			mode = "rename"
		}
		want += fmt.Sprintf("- edit %d by %s\n", n, mode)
	}
	d := matrix.Parse([]byte(want))
	ok, refused := 0, 0
	for w, r := range results {
		if _, err := d.UpdateTask(ids[w], matrix.Update{Description: matrix.Str(r.accepted)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		ok, refused = ok+r.ok, refused+r.refused
		for _, n := range r.notes {
			t.Logf("writer %d said: %s", w, n)
		}
	}
	got := readText(t, ws.MatrixPath())
	if got != string(d.Bytes()) {
		t.Fatalf("the matrix is not the replay of the accepted edits:\n%s\nwant\n%s", got, d.Bytes())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(ws.AgentDir(), ".DEVELOPMENT_MATRIX.md.*")); len(leftovers) != 2 {
		t.Errorf("files next to the matrix: %v, want the lock and the previous version", leftovers)
	}
	t.Logf("%d agentinfra updates from %d writer processes: %d landed, %d refused with a message; %d editor saves (in place and by rename) all landed; the file is the replay of the accepted edits byte for byte",
		writers*updates, writers, ok, refused, 2*saves)
}
