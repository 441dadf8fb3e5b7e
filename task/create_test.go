package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

func TestCreateTask(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	writeFile(t, filepath.Join(ws.SkillsDir(), "go-testing", "SKILL.md"), "---\nname: go-testing\ndescription: x\n---\nbody\n")
	before := readFile(t, ws.MatrixPath())
	task, dir, err := createTask(context.Background(), ws, CreateOptions{
		Description: "Add retry to the fetcher", Mode: "coder", Priority: "p1", Difficulty: "hard",
		Skills: []string{"go-testing", " go-testing "}, Agents: []string{"coder"},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "000001" || task.Status != "TODO" || task.Priority != "P1" || task.Created != "2026-11-21" || task.Updated != "2026-11-21" {
		t.Errorf("task = %+v", task)
	}
	wantRow := "| 000001 | TODO | P1 | hard | coder | go-testing | @coder | Add retry to the fetcher | 2026-11-21 | 2026-11-21 |\n"
	if got := readFile(t, ws.MatrixPath()); got != before+wantRow {
		t.Errorf("matrix after create:\n%s\nwant:\n%s", got, before+wantRow)
	}
	if want := filepath.Join(ws.TasksDir(), "000001_add_retry_to_the_fetcher"); dir != want {
		t.Errorf("dir = %s, want %s", dir, want)
	}
	readme := readFile(t, filepath.Join(dir, "README.md"))
	for _, want := range []string{"# 000001: Add retry to the fetcher\n", "- **Mode:** coder\n", "- **Skills:** go-testing\n",
		"- **Agents:** @coder\n", "- **Priority:** P1 · **Difficulty:** hard\n", "- 2026-11-21: created as TODO\n"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	if strings.Contains(readme, "{{") {
		t.Errorf("README has unfilled placeholders:\n%s", readme)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"README.md", "artifacts", "tracking"}) {
		t.Errorf("task folder holds %v", names)
	}
	left, _ := filepath.Glob(filepath.Join(ws.TasksDir(), ".creating-*"))
	if len(left) != 0 {
		t.Errorf("temporary folders left: %v", left)
	}

	// The workspace template wins over the embedded one; a given slug is used.
	writeFile(t, filepath.Join(ws.TemplatesDir(), "unified_task.md"), "{{id}} {{slug}} {{mode}} {{skills}} {{unknown}}\n")
	_, dir, err = createTask(context.Background(), ws, CreateOptions{Description: "Second", Mode: "reviewer", Slug: "my-slug"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != "000002 my-slug reviewer - {{unknown}}\n" {
		t.Errorf("custom template README = %q", got)
	}
}

// Without .agent/templates/unified_task.md the embedded template is used.
func TestCreateTaskEmbeddedTemplate(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	if err := os.RemoveAll(ws.TemplatesDir()); err != nil {
		t.Fatal(err)
	}
	task, dir, err := createTask(context.Background(), ws, CreateOptions{Description: "No template here", Mode: "oracle"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(dir, "README.md")), RenderReadme(DefaultTemplate(), task, "no_template_here", task.Created); got != want {
		t.Errorf("README:\n%s\nwant:\n%s", got, want)
	}
}

// A temporary folder left by a killed writer is removed by the next create.
func TestCreateTaskRemovesStaleTempFolders(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	stale := filepath.Join(ws.TasksDir(), tmpPrefix+"123456")
	writeFile(t, filepath.Join(stale, "README.md"), "half-built")
	if _, _, err := createTask(context.Background(), ws, CreateOptions{Description: "x", Mode: "coder"}, now); err != nil {
		t.Fatal(err)
	}
	if exists(stale) {
		t.Error("stale temporary folder left in place")
	}
}

func TestCreateTaskMakesTasksFolder(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	if err := os.Remove(ws.TasksDir()); err != nil {
		t.Fatal(err)
	}
	if _, dir, err := createTask(context.Background(), ws, CreateOptions{Description: "x", Mode: "coder"}, now); err != nil || !strings.HasPrefix(dir, ws.TasksDir()) {
		t.Fatalf("create without tasks/: %s %v", dir, err)
	}
}

func TestCreateTaskSkipsIDsWithFolders(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	// A stray folder for 000001 (no row) and an archived 000002: both IDs are skipped.
	writeFile(t, filepath.Join(ws.TasksDir(), "000001_stray", "README.md"), "x")
	writeFile(t, filepath.Join(ws.ArchiveDir(), "000002_old", "README.md"), "x")
	task, _, err := createTask(context.Background(), ws, CreateOptions{Description: "x", Mode: "coder"}, now)
	if err != nil || task.ID != "000003" {
		t.Fatalf("got %s, %v; want 000003", task.ID, err)
	}
}

// Every failing create leaves the workspace byte-identical: no row, no folder.
func TestCreateTaskErrorsChangeNothing(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	// One successful create first, so the store's lock file exists as in any used workspace.
	if _, _, err := createTask(ctx, ws, CreateOptions{Description: "first", Mode: "coder"}, now); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T)
		o     CreateOptions
		is    error
		msg   string
	}{
		{name: "empty description", o: CreateOptions{Description: "  ", Mode: "coder"}, is: matrix.ErrInvalid, msg: "needs a description"},
		{name: "bad slug", o: CreateOptions{Description: "x", Mode: "coder", Slug: "../evil"}, is: matrix.ErrInvalid, msg: "'/'"},
		{name: "dot slug", o: CreateOptions{Description: "x", Mode: "coder", Slug: ".hidden"}, is: matrix.ErrInvalid, msg: "'.'"},
		{name: "unknown skill", o: CreateOptions{Description: "x", Mode: "coder", Skills: []string{"nope"}}, is: matrix.ErrRefused, msg: "no skills yet"},
		{name: "bad priority", o: CreateOptions{Description: "x", Mode: "coder", Priority: "P9"}, is: matrix.ErrInvalid, msg: "P1"},
		{name: "bad agent", o: CreateOptions{Description: "x", Mode: "coder", Agents: []string{"@bad agent"}}, is: matrix.ErrInvalid},
		{name: "folder cannot be created", o: CreateOptions{Description: "x", Mode: "coder"}, msg: "create task folder",
			setup: func(t *testing.T) {
				// tasks/ is a file: MkdirTemp fails inside the lock, so no row is written.
				if err := os.RemoveAll(ws.TasksDir()); err != nil {
					t.Fatal(err)
				}
				writeFile(t, ws.TasksDir(), "I am a file")
			}},
		{name: "matrix write fails", o: CreateOptions{Description: "x", Mode: "coder"}, msg: "disk full",
			setup: func(t *testing.T) {
				testHookBeforeWrite = func() error { return errors.New("disk full") }
				t.Cleanup(func() { testHookBeforeWrite = nil })
			}},
		{name: "no task table", o: CreateOptions{Description: "x", Mode: "coder"}, is: matrix.ErrRefused,
			setup: func(t *testing.T) { writeFile(t, ws.MatrixPath(), "# Matrix\n\nNo table yet.\n") }},
		{name: "missing matrix", o: CreateOptions{Description: "x", Mode: "coder"}, msg: "agentinfra init",
			setup: func(t *testing.T) { os.Remove(ws.MatrixPath()) }},
		{name: "cancelled", o: CreateOptions{Description: "x", Mode: "coder"}, is: context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Each case gets a fresh copy of the workspace state.
			matrixBytes := readFile(t, ws.MatrixPath())
			defer writeFile(t, ws.MatrixPath(), matrixBytes)
			defer func() {
				if fi, err := os.Stat(ws.TasksDir()); err == nil && !fi.IsDir() {
					os.Remove(ws.TasksDir())
					os.Mkdir(ws.TasksDir(), 0o755)
				}
			}()
			if c.setup != nil {
				c.setup(t)
			}
			check := treehash.Guard(t, ws.Root)
			cctx := ctx
			if c.is == context.Canceled {
				var cancel func()
				cctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			_, dir, err := createTask(cctx, ws, c.o, now)
			if err == nil {
				t.Fatalf("created %s", dir)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want it to mention %q", err, c.msg)
			}
			check()
		})
	}
	// Force accepts an unknown skill.
	if _, _, err := createTask(ctx, ws, CreateOptions{Description: "x", Mode: "future", Skills: []string{"later"}, Force: true}, now); err != nil {
		t.Errorf("forced create: %v", err)
	}
}

// Modes and skills follow one rule (issue 19): a name with no file is
// refused unless force (a typo, with close names), or accepted with a
// warning when rows of the matrix already use it (the workspace's words).
func TestUnknownModeAndSkillOneRule(t *testing.T) {
	ctx := context.Background()
	ws := newWS(t)
	seqIDs(t)
	unchanged := treehash.Guard(t, ws.Root)
	for _, o := range []CreateOptions{
		{Description: "first", Mode: "codr"},
		{Description: "second", Mode: "coder", Skills: []string{"go-tsting"}},
	} {
		_, err := CreateTask(ctx, ws, o, now)
		var ref *agenterr.Error
		if !errors.As(err, &ref) || ref.Kind != agenterr.Refused || ref.Override != "force" || !strings.Contains(err.Error(), "create .agent/") || strings.Contains(err.Error(), "--") {
			t.Errorf("create %+v: %#v", o, err)
		}
		if ref != nil && ref.Field != map[bool]string{true: "mode", false: "skills"}[o.Mode == "codr"] {
			t.Errorf("create %+v: field %q", o, ref.Field)
		}
	}
	unchanged()
	c, err := CreateTask(ctx, ws, CreateOptions{Description: "first", Mode: "codr", Skills: []string{"house-style"}, Force: true}, now)
	if err != nil || c.Task.Mode != "codr" || c.Dir == "" || len(c.Warnings) != 2 ||
		!strings.Contains(c.Warnings[0], `mode "codr" has no .agent/agents/codr.md; did you mean coder?`) || !strings.Contains(c.Warnings[1], `skill "house-style" has no`) {
		t.Fatalf("create with --force: %+v, %v", c, err)
	}
	// Now a row uses them: the workspace's own words, accepted with a warning.
	c2, err := CreateTask(ctx, ws, CreateOptions{Description: "again", Mode: "codr", Skills: []string{"house-style"}}, now)
	if err != nil || len(c2.Warnings) != 2 {
		t.Errorf("a mode and a skill rows already use: %+v, %v", c2, err)
	}
	if _, err := UpdateTask(ctx, ws, c.Task.ID, matrix.Update{Set: map[string]string{"mode": "oracel"}}, now, UpdateOptions{}); !errors.Is(err, matrix.ErrRefused) || !strings.Contains(err.Error(), "did you mean oracle?") {
		t.Errorf("update with an unknown mode: %v", err)
	}
	if r, err := UpdateTask(ctx, ws, c.Task.ID, matrix.Update{Mode: matrix.Str("coder")}, now, UpdateOptions{}); err != nil || len(r.Warnings) != 0 {
		t.Errorf("update with a known mode: %+v, %v", r, err)
	}
}

// Goroutines creating and updating at once (run with -race): nothing lost.
func TestConcurrentCreateUpdate(t *testing.T) {
	t.Setenv(EnvLockTimeout, "2m") // 40 serialized fsyncs on a loaded machine
	ctx := context.Background()
	ws := newWS(t)
	const n = 20
	var ids []string
	for i := 0; i < n; i++ {
		tk, _, err := createTask(ctx, ws, CreateOptions{Description: "existing " + strconv.Itoa(i), Mode: "coder"}, now)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _, err := createTask(ctx, ws, CreateOptions{Description: "new " + strconv.Itoa(i), Mode: "coder"}, now)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := UpdateTask(ctx, ws, ids[i], matrix.Update{Status: matrix.Str("REVIEW")}, now, UpdateOptions{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	d := matrix.Parse([]byte(readFile(t, ws.MatrixPath())))
	if len(d.Tasks()) != 2*n || len(d.Diagnostics()) != 0 {
		t.Fatalf("%d rows, diagnostics %v", len(d.Tasks()), d.Diagnostics())
	}
	for _, id := range ids {
		if tk, _ := d.Task(id); tk.Status != "REVIEW" {
			t.Errorf("update of %s lost", id)
		}
	}
	if entries, _ := os.ReadDir(ws.TasksDir()); len(entries) != 2*n {
		t.Errorf("%d folders, want %d", len(entries), 2*n)
	}
}
