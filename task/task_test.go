package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
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

// createTask is CreateTask for tests that need the row and the folder only.
func createTask(ctx context.Context, ws *workspace.Workspace, o CreateOptions, now time.Time) (matrix.Task, string, error) {
	c, err := CreateTask(ctx, ws, o, now)
	return c.Task, c.Dir, err
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

func TestRenderReadmeEmbeddedTemplateHasLogSection(t *testing.T) {
	out := RenderReadme(DefaultTemplate(), matrix.Task{ID: "abcdef", Description: "d", Status: "TODO", Priority: "P2", Difficulty: "med", Created: "2026-01-02"}, "d", "2026-01-02")
	if _, ok := AppendStatusLine([]byte(out), "- x"); !ok {
		t.Error("the embedded template has no status/log section")
	}
}

// People's own templates use [ID] and [Task Name]; create fills them too,
// and leaves placeholders it does not know as written.
func TestCreateFillsBracketTemplate(t *testing.T) {
	seqIDs(t)
	ws := newWS(t)
	tmpl := "# [ID] - [Task Name]\n\n**Status:** [Status] · **Date:** [Date] · {{date}}\n\n## Description\n\n[Description]\n\n[Assignee] {{unknown}} [ ] [id] [task name] [x]\n"
	writeFile(t, filepath.Join(ws.TemplatesDir(), "unified_task.md"), tmpl)
	task, dir, err := createTask(context.Background(), ws, CreateOptions{Description: "Fix the login<br>Users are logged out after 5 minutes.", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := "# " + task.ID + " - Fix the login\n\n**Status:** TODO · **Date:** " + matrix.Today(now) + " · " + matrix.Today(now) +
		"\n\n## Description\n\nFix the login<br>Users are logged out after 5 minutes.\n\n[Assignee] {{unknown}} [ ] " + task.ID + " Fix the login [x]\n"
	if got := readFile(t, filepath.Join(dir, "README.md")); got != want {
		t.Errorf("README:\n%s\nwant:\n%s", got, want)
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

// init in a workspace with modes of its own adds no starter modes beside
// them (issue 19); in a fresh one it writes them.
func TestInitKeepsAWorkspacesOwnModes(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".agent", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "agents", "fixer.md"), []byte("You fix.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	created, err := Init(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created {
		if strings.HasPrefix(c, ".agent/agents/") {
			t.Errorf("init added %s beside the workspace's own mode", c)
		}
	}
	fresh := t.TempDir()
	created, _ = Init(context.Background(), fresh)
	if !slices.Contains(created, ".agent/agents/coder.md") {
		t.Errorf("a fresh init: %v", created)
	}
}
