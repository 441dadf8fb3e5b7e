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
	"time"

	"github.com/agentinfra/agentinfra/internal/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

var now = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// seqIDs makes newID return 000001, 000002, ... for the test's duration.
func seqIDs(t *testing.T) {
	t.Helper()
	n := 0
	old := randRead
	randRead = func(b []byte) (int, error) {
		n++
		b[0], b[1], b[2] = byte(n>>16), byte(n>>8), byte(n)
		return len(b), nil
	}
	t.Cleanup(func() { randRead = old })
}

func newWS(t *testing.T) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	if _, err := Init(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSlugify(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Add retry to the fetcher", "add_retry_to_the_fetcher"},
		{"  Fix: parser -- crashes on `|` cells!! ", "fix_parser_crashes_on_cells"},
		{"Über-schnelle Größenänderung", "uber_schnelle_grossenanderung"},
		{"../../etc/passwd", "etc_passwd"},
		{"日本語だけ", "task"},
		{"", "task"},
		{"HTTP2 support for v1.2.3", "http2_support_for_v1_2_3"},
		// 40 characters at most, cut at a word boundary.
		{"Refactor the matrix store so that writers never block readers at all", "refactor_the_matrix_store_so_that"},
		// No boundary in the second half: hard cut.
		{"a supercalifragilisticexpialidociousandthensome", "a_supercalifragilisticexpialidociousandt"},
	} {
		got := Slugify(c.in)
		if got != c.want {
			t.Errorf("Slugify(%q) = %q, want %q", c.in, got, c.want)
		}
		if len(got) > MaxSlugLen || ValidateSlug(got) != nil {
			t.Errorf("Slugify(%q) = %q is not a valid slug of at most %d chars", c.in, got, MaxSlugLen)
		}
	}
}

func TestValidateSlug(t *testing.T) {
	for _, ok := range []string{"fix_parser", "v1.2-beta", "A"} {
		if err := ValidateSlug(ok); err != nil {
			t.Errorf("ValidateSlug(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "..", "a..b", ".hidden", `a\b`, "with space", "-lead", strings.Repeat("x", 101)} {
		err := ValidateSlug(bad)
		if !errors.Is(err, matrix.ErrInvalid) {
			t.Errorf("ValidateSlug(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestInit(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	created, err := Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".agent/", ".agent/.gitignore", ".agent/DEVELOPMENT_MATRIX.md",
		".agent/agents/", ".agent/agents/coder.md", ".agent/agents/explorer.md", ".agent/agents/oracle.md", ".agent/agents/reviewer.md",
		".agent/templates/", ".agent/templates/unified_task.md",
		".agent/tasks/", ".agent/archive/", ".agent/skills/",
	}
	if !slices.Equal(created, want) {
		t.Fatalf("created:\n%q\nwant:\n%q", created, want)
	}
	ws, _ := workspace.New(dir)
	src := readFile(t, ws.MatrixPath())
	if !strings.Contains(src, matrix.CanonicalHeader) {
		t.Errorf("new matrix lacks the canonical header:\n%s", src)
	}
	doc := matrix.Parse([]byte(src))
	if !doc.HasTaskTable() || len(doc.Tasks()) != 0 {
		t.Errorf("new matrix: task table %v, %d tasks", doc.HasTaskTable(), len(doc.Tasks()))
	}
	if ds := Validate(ws, doc, "DEVELOPMENT_MATRIX.md", func(string) string { return "" }); len(ds) != 0 {
		t.Errorf("new workspace does not validate cleanly: %v", ds)
	}
	modes, problems, err := skills.ListModes(ctx, ws)
	if err != nil || len(problems) != 0 {
		t.Fatalf("starter modes: %v %v", err, problems)
	}
	var names []string
	for _, m := range modes {
		names = append(names, m.Name)
		if m.Description == "" || strings.TrimSpace(m.Body) == "" {
			t.Errorf("mode %s has no description or body", m.Name)
		}
	}
	if !slices.Equal(names, []string{"coder", "explorer", "oracle", "reviewer"}) {
		t.Errorf("modes = %v", names)
	}
	if got := readFile(t, filepath.Join(ws.TemplatesDir(), "unified_task.md")); got != DefaultTemplate() {
		t.Error("template differs from the embedded one")
	}

	// Idempotent, never overwrites: edit a file, remove another, run again.
	writeFile(t, ws.ModePath("coder"), "my own coder\n")
	if err := os.Remove(ws.ModePath("oracle")); err != nil {
		t.Fatal(err)
	}
	created, err = Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(created, []string{".agent/agents/oracle.md"}) {
		t.Errorf("second init created %q, want only the removed oracle.md", created)
	}
	if got := readFile(t, ws.ModePath("coder")); got != "my own coder\n" {
		t.Errorf("init overwrote coder.md: %q", got)
	}
	check := treehash.Guard(t, dir)
	created, err = Init(ctx, dir)
	if err != nil || len(created) != 0 || created == nil {
		t.Errorf("third init: created %#v, err %v; want empty, non-nil", created, err)
	}
	check()
}

func TestInitErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Init(context.Background(), filepath.Join(dir, "missing")); err == nil {
		t.Error("init in a missing folder succeeded")
	}
	writeFile(t, filepath.Join(dir, ".agent", "tasks"), "not a folder")
	_, err := Init(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("init with .agent/tasks a file: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, ".agent", "tasks")); got != "not a folder" {
		t.Errorf("init replaced the file .agent/tasks: %q", got)
	}
}

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
	if got, want := readFile(t, filepath.Join(dir, "README.md")), RenderReadme(DefaultTemplate(), task, "no_template_here"); got != want {
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

func TestUpdateTask(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, dir, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme0 := readFile(t, filepath.Join(dir, "README.md"))
	matrix0 := readFile(t, ws.MatrixPath())
	later := now.Add(26 * time.Hour)
	res, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("in progress"), AddAgents: []string{"coder", "@coder"}}, later, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Changed, []string{"status", "agents"}) || res.Before.Status != "TODO" || res.After.Status != "IN_PROGRESS" {
		t.Errorf("result = %+v", res)
	}
	wantMatrix := strings.Replace(matrix0,
		"| 000001 | TODO | P2 | med | coder |  |  | Fix the lock | 2026-11-21 | 2026-11-21 |",
		"| 000001 | IN_PROGRESS | P2 | med | coder |  | @coder | Fix the lock | 2026-11-21 | 2026-11-22 |", 1)
	if got := readFile(t, ws.MatrixPath()); got != wantMatrix || got == matrix0 {
		t.Errorf("matrix after update:\n%s\nwant:\n%s", got, wantMatrix)
	}
	wantReadme := readme0 + "- 2026-11-22 16:05: status TODO → IN_PROGRESS\n"
	if got := readFile(t, filepath.Join(dir, "README.md")); got != wantReadme {
		t.Errorf("README after update:\n%s\nwant:\n%s", got, wantReadme)
	}
	if res.LogFile != filepath.Join(dir, "README.md") {
		t.Errorf("LogFile = %q", res.LogFile)
	}

	// No status change: no log line; the agent is not added twice.
	res, err = UpdateTask(ctx, ws, task.ID, matrix.Update{Priority: matrix.Str("1"), AddAgents: []string{"CODER"}}, later, UpdateOptions{})
	if err != nil || res.LogFile != "" || !slices.Equal(res.Changed, []string{"priority"}) || !slices.Equal(res.After.Agents, []string{"@coder"}) {
		t.Errorf("priority update: %+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != wantReadme {
		t.Errorf("README changed without a status change:\n%s", got)
	}

	// A README without a status section is left alone; the row still changes.
	writeFile(t, filepath.Join(dir, "README.md"), "# Notes\n\nnothing here\n")
	res, err = UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, later, UpdateOptions{})
	if err != nil || res.LogFile != "" || res.After.Status != "DONE" {
		t.Errorf("update without a log section: %+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(dir, "README.md")); got != "# Notes\n\nnothing here\n" {
		t.Errorf("README without a log section changed: %q", got)
	}
}

func TestUpdateTaskErrorsChangeNothing(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, _, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   string
		u    matrix.Update
		is   error
		msg  string
	}{
		{"unknown id", "000011", matrix.Update{Status: matrix.Str("DONE")}, matrix.ErrNotFound, "did you mean 000001?"},
		{"unknown id far", "abcdef", matrix.Update{Status: matrix.Str("DONE")}, matrix.ErrNotFound, `no task "abcdef"`},
		{"bad status", task.ID, matrix.Update{Status: matrix.Str("PAUSED")}, matrix.ErrInvalid, "TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"},
		{"bad difficulty", task.ID, matrix.Update{Difficulty: matrix.Str("extreme")}, matrix.ErrInvalid, "easy"},
		{"unknown skill via set", task.ID, matrix.Update{Set: map[string]string{"skills": "nope"}}, matrix.ErrRefused, `unknown skill "nope"`},
		{"unknown column", task.ID, matrix.Update{Set: map[string]string{"Owner": "ana"}}, matrix.ErrInvalid, `column "Owner"`},
		{"ID column", task.ID, matrix.Update{Set: map[string]string{"ID": "abcdef"}}, matrix.ErrInvalid, "cannot be changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := treehash.Guard(t, ws.Root)
			_, err := UpdateTask(ctx, ws, c.id, c.u, now, UpdateOptions{})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, c.is, c.msg)
			}
			check()
		})
	}
}

// If the matrix cannot be written, the README line is taken back.
func TestUpdateTaskReadmeRollback(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	task, _, err := createTask(ctx, ws, CreateOptions{Description: "Fix the lock", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	testHookBeforeWrite = func() error { return errors.New("disk full") }
	t.Cleanup(func() { testHookBeforeWrite = nil })
	check := treehash.Guard(t, ws.Root)
	if _, err := UpdateTask(ctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, now, UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failed write: %v", err)
	}
	check()
	testHookBeforeWrite = nil
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := UpdateTask(cctx, ws, task.ID, matrix.Update{Status: matrix.Str("DONE")}, now, UpdateOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled update: %v", err)
	}
	check()
}

func TestAppendStatusLine(t *testing.T) {
	const line = "- NEW"
	for _, c := range []struct{ name, in, want string }{
		{"at end", "# T\n\n## Status log\n\n- a\n", "# T\n\n## Status log\n\n- a\n- NEW\n"},
		{"no final newline", "# T\n## Log\n- a", "# T\n## Log\n- a\n- NEW\n"},
		{"empty section", "# T\n## Status\n", "# T\n## Status\n\n- NEW\n"},
		{"middle section", "# T\n\n## History\n\n- a\n\n## Plan\n\n1. x\n", "# T\n\n## History\n\n- a\n- NEW\n\n## Plan\n\n1. x\n"},
		{"subsections stay inside", "## Log\n- a\n### detail\ntext\n## Next\n", "## Log\n- a\n### detail\ntext\n- NEW\n## Next\n"},
		{"title mentioning log is not the section", "# Fix the log parser\n\nbody\n\n## Status log\n- a\n\n## End\n", "# Fix the log parser\n\nbody\n\n## Status log\n- a\n- NEW\n\n## End\n"},
		{"heading in code fence ignored", "# T\n```\n## Log\n```\n## Status\n- a\n", "# T\n```\n## Log\n```\n## Status\n- a\n- NEW\n"},
		{"crlf", "# T\r\n## Log\r\n- a\r\n", "# T\r\n## Log\r\n- a\r\n- NEW\r\n"},
	} {
		got, ok := AppendStatusLine([]byte(c.in), line)
		if !ok || string(got) != c.want {
			t.Errorf("%s: got %q (ok %v), want %q", c.name, got, ok, c.want)
		}
	}
	for _, in := range []string{"", "# Title only\n", "no headings\n## Logistics-free plan?\n"[:12], "```\n## Log\n```\n", "#Log (not a heading)\n"} {
		if got, ok := AppendStatusLine([]byte(in), line); ok || string(got) != in {
			t.Errorf("%q: got %q ok %v, want unchanged", in, got, ok)
		}
	}
}

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

func TestRenderReadmeEmbeddedTemplateHasLogSection(t *testing.T) {
	out := RenderReadme(DefaultTemplate(), matrix.Task{ID: "abcdef", Description: "d", Status: "TODO", Priority: "P2", Difficulty: "med", Created: "2026-01-02"}, "d")
	if _, ok := AppendStatusLine([]byte(out), "- x"); !ok {
		t.Error("the embedded template has no status/log section")
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

func TestListAndShowTask(t *testing.T) {
	seqIDs(t)
	ctx := context.Background()
	ws := newWS(t)
	a, dirA, _ := createTask(ctx, ws, CreateOptions{Description: "alpha", Mode: "coder", Priority: "P3"}, now)
	b, _, _ := createTask(ctx, ws, CreateOptions{Description: "beta", Mode: "reviewer", Priority: "P1"}, now)
	got, err := ListTasks(ctx, ws, matrix.Query{Sort: "priority"})
	if err != nil || len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
		t.Errorf("ListTasks sorted by priority = %+v, %v", got, err)
	}
	if _, err := ListTasks(ctx, ws, matrix.Query{Status: []string{"PAUSED"}}); !errors.Is(err, matrix.ErrInvalid) {
		t.Errorf("bad status: %v", err)
	}
	info, err := ShowTask(ctx, ws, a.ID)
	if err != nil || info.Task.Description != "alpha" || info.Dir != dirA || info.Archived || info.Readme != readFile(t, filepath.Join(dirA, "README.md")) {
		t.Errorf("ShowTask = %+v, %v", info, err)
	}
	if _, err := ShowTask(ctx, ws, "000003"); !errors.Is(err, matrix.ErrNotFound) || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unknown ID: %v", err)
	}
	os.Remove(ws.MatrixPath())
	if _, err := ListTasks(ctx, ws, matrix.Query{}); err == nil || !strings.Contains(err.Error(), "agentinfra init") {
		t.Errorf("missing matrix: %v", err)
	}
}

// People's own templates use [ID] and [Task Name]; create fills them too,
// and leaves placeholders it does not know as written.
func TestCreateFillsBracketTemplate(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	tmpl := "# [ID] - [Task Name]\n\n**Status:** [Status] · **Date:** [Date] · {{date}}\n\n## Description\n\n[Description]\n\n[Assignee] {{unknown}} [ ] [id]\n"
	writeFile(t, filepath.Join(ws.TemplatesDir(), "unified_task.md"), tmpl)
	task, dir, err := createTask(context.Background(), ws, CreateOptions{Description: "Fix the login<br>Users are logged out after 5 minutes.", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := "# " + task.ID + " - Fix the login\n\n**Status:** TODO · **Date:** " + matrix.Today(now) + " · " + matrix.Today(now) +
		"\n\n## Description\n\nFix the login<br>Users are logged out after 5 minutes.\n\n[Assignee] {{unknown}} [ ] [id]\n"
	if got := readFile(t, filepath.Join(dir, "README.md")); got != want {
		t.Errorf("README:\n%s\nwant:\n%s", got, want)
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

// A mode with no .agent/agents/{mode}.md is a warning, not a refusal (issue
// 9: real matrices name modes that have no file); an unknown skill is
// refused, typed, with the override that accepts it.
func TestUnknownModeWarnsUnknownSkillRefuses(t *testing.T) {
	ctx := context.Background()
	ws := newWS(t)
	seqIDs(t)
	c, err := CreateTask(ctx, ws, CreateOptions{Description: "first", Mode: "codr"}, now)
	if err != nil || c.Task.Mode != "codr" || c.Dir == "" {
		t.Fatalf("create with an unknown mode: %+v, %v", c, err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `mode "codr" has no .agent/agents/codr.md; did you mean coder?`) {
		t.Errorf("warnings = %q", c.Warnings)
	}
	r, err := UpdateTask(ctx, ws, c.Task.ID, matrix.Update{Set: map[string]string{"mode": "oracel"}}, now, UpdateOptions{})
	if err != nil || r.After.Mode != "oracel" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "did you mean oracle?") {
		t.Errorf("update with an unknown mode: %+v, %v", r, err)
	}
	if r, err := UpdateTask(ctx, ws, c.Task.ID, matrix.Update{Mode: matrix.Str("coder")}, now, UpdateOptions{}); err != nil || len(r.Warnings) != 0 {
		t.Errorf("update with a known mode: %+v, %v", r, err)
	}
	unchanged := treehash.Guard(t, ws.Root)
	_, err = CreateTask(ctx, ws, CreateOptions{Description: "second", Mode: "coder", Skills: []string{"go-tsting"}}, now)
	var ref *matrix.RefusedError
	if !errors.As(err, &ref) || ref.Field != "skills" || ref.Override != "force" || strings.Contains(err.Error(), "--") {
		t.Errorf("unknown skill: %#v", err)
	}
	unchanged()
}

// createTask is CreateTask for tests that need the row and the folder only.
func createTask(ctx context.Context, ws *workspace.Workspace, o CreateOptions, now time.Time) (matrix.Task, string, error) {
	c, err := CreateTask(ctx, ws, o, now)
	return c.Task, c.Dir, err
}
