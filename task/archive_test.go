package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

func TestArchive(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	mk := func(desc, status string) (matrix.Task, string) {
		t.Helper()
		task, dir, err := createTask(ctx, ws, CreateOptions{Description: desc, Mode: "coder"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if status != "TODO" {
			if _, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str(status)}, now, UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return task, dir
	}
	todo, _ := mk("still to do", "TODO")
	done, doneDir := mk("finished work", "DONE")
	noDir, noDirDir := mk("done without folder", "DONE")
	if err := os.RemoveAll(noDirDir); err != nil {
		t.Fatal(err)
	}
	clash, clashDir := mk("done but clashing", "DONE")
	writeFile(t, filepath.Join(ws.ArchiveDir(), filepath.Base(clashDir), "README.md"), "older copy")

	for _, c := range []struct {
		id  string
		is  error
		msg string
	}{
		{todo.ID, ErrNotDone, "task 000001 is TODO"},
		{"00000f", matrix.ErrNotFound, "did you mean"},
		{noDir.ID, ErrNoTaskDir, "nothing to archive"},
		{clash.ID, ErrExists, ".agent/archive/000004_done_but_clashing"},
	} {
		check := treehash.Guard(t, ws.Root)
		_, err := Archive(ctx, ws, c.id)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("archive %s: %v, want %v mentioning %q", c.id, err, c.is, c.msg)
		}
		check()
	}

	matrixBefore := readFile(t, ws.MatrixPath())
	moved, err := Archive(ctx, ws, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(ws.ArchiveDir(), filepath.Base(doneDir))
	if len(moved) != 1 || moved[0].From != doneDir || moved[0].To != want {
		t.Errorf("moved = %+v", moved)
	}
	if exists(doneDir) || !exists(filepath.Join(want, "README.md")) {
		t.Error("folder was not moved")
	}
	if got := readFile(t, ws.MatrixPath()); got != matrixBefore {
		t.Error("archive changed the matrix; the row must stay")
	}
	check := treehash.Guard(t, ws.Root)
	if _, err := Archive(ctx, ws, done.ID); !errors.Is(err, ErrAlreadyArchived) {
		t.Errorf("second archive: %v", err)
	}
	check()
}

func TestArchiveAllDone(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	var dirs []string
	for i, st := range []string{"DONE", "TODO", "DONE", "REVIEW", "DONE"} {
		task, dir, err := createTask(ctx, ws, CreateOptions{Description: "task " + st, Mode: "coder", Slug: "t" + string(rune('a'+i))}, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str(st)}, now, UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	// A clash on the last DONE task makes the whole batch fail and change nothing.
	writeFile(t, filepath.Join(ws.ArchiveDir(), "000005_te", "x"), "x")
	check := treehash.Guard(t, ws.Root)
	if _, err := ArchiveAllDone(ctx, ws); !errors.Is(err, ErrExists) {
		t.Fatalf("clash: %v", err)
	}
	check()
	os.RemoveAll(filepath.Join(ws.ArchiveDir(), "000005_te"))

	moved, err := ArchiveAllDone(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range moved {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"000001", "000003", "000005"}) {
		t.Errorf("archived %v", ids)
	}
	for i, d := range dirs {
		if exists(d) != (i == 1 || i == 3) {
			t.Errorf("folder %s exists=%v", d, exists(d))
		}
	}
	moved, err = ArchiveAllDone(ctx, ws)
	if err != nil || moved == nil || len(moved) != 0 {
		t.Errorf("nothing left: %#v %v", moved, err)
	}
}

func TestScaffoldTaskAllOrNothing(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, dir, err := createTask(ctx, ws, CreateOptions{Description: "Has a folder", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	// No tasks/ folder at all: scaffold creates it, and a failure removes it again.
	if err := os.RemoveAll(ws.TasksDir()); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, ws.Root)
	testHookPlaced = func() error { return errors.New("disk full") }
	_, _, err = ScaffoldTask(ctx, ws, task.ID, ScaffoldOptions{}, now)
	testHookPlaced = nil
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("failed scaffold: %v", err)
	}
	check()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ScaffoldTask(cctx, ws, task.ID, ScaffoldOptions{}, now); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, _, err := ScaffoldTask(ctx, ws, "../"+task.ID, ScaffoldOptions{}, now); !errors.Is(err, matrix.ErrInvalid) {
		t.Errorf("path in the ID: %v", err)
	}
	if _, _, err := ScaffoldTask(ctx, ws, task.ID, ScaffoldOptions{Slug: "../up"}, now); !errors.Is(err, matrix.ErrInvalid) {
		t.Errorf("path in the slug: %v", err)
	}
	check()
	got, gotDir, err := ScaffoldTask(ctx, ws, task.ID, ScaffoldOptions{}, now)
	if err != nil || gotDir != dir || got.ID != task.ID {
		t.Fatalf("scaffold = %s, %v; want %s", gotDir, err, dir)
	}
	// An archived folder counts as the task's folder.
	if _, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, now, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Archive(ctx, ws, task.ID); err != nil {
		t.Fatal(err)
	}
	check = treehash.Guard(t, ws.Root)
	if _, _, err := ScaffoldTask(ctx, ws, task.ID, ScaffoldOptions{}, now); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "archived in .agent/archive/"+task.ID+"_has_a_folder") {
		t.Errorf("archived task: %v", err)
	}
	check()
}
