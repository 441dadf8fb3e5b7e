package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// oldFormatWS is an initialized workspace whose matrix is the older Item
// format (154 items in 5 tables, no task table), as people wrote it before
// task tables had IDs. The lock file exists, as in a workspace written once.
func oldFormatWS(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "matrix", "testdata", "legacy", "old_items.md"))
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(root, ".agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agent, "DEVELOPMENT_MATRIX.md"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// init fills in the rest of .agent/ and keeps the matrix; it says the
	// workspace is not ready (tested below).
	runCLI(t, root, cliOpts{}, "init")
	if got := matrixOf(t, root); got != string(src) {
		t.Fatal("init changed an existing matrix")
	}
	if err := os.WriteFile(filepath.Join(agent, ".DEVELOPMENT_MATRIX.md.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// wantNoTaskTable checks a message says there is no task table, that the
// file is the older format with 154 items, and how to convert it.
func wantNoTaskTable(t *testing.T, what, msg string) {
	t.Helper()
	for _, want := range []string{"no task table (a table whose header has ID and Status columns)", "older format, 154 items in 5 `| Item | Priority | ... |` tables",
		"`agentinfra migrate --dry-run`", "then `agentinfra migrate`"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: message lacks %q:\n%s", what, want, msg)
		}
	}
}

func TestCLIOldFormatSaysNoTaskTable(t *testing.T) {
	root := oldFormatWS(t)
	check := treehash.Guard(t, root)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"task", "list"}, 5}, {[]string{"task", "list", "--status", "TODO"}, 5}, {[]string{"task", "list", "--json"}, 5}, // refused
		{[]string{"task", "create", "--description", "New thing", "--mode", "coder"}, 5},
		{[]string{"task", "show", "a1b2c3"}, 3}, {[]string{"task", "update", "a1b2c3", "--status", "DONE"}, 3}, // not found
	} {
		args := tc.args
		code, out, errOut := runCLI(t, root, cliOpts{}, args...)
		if code != tc.code || out != "" {
			t.Errorf("%v on an older-format matrix: exit %d, stdout %q; want %d and nothing on stdout", args, code, out, tc.code)
		}
		wantNoTaskTable(t, strings.Join(args, " "), errOut)
	}
	// init does not call the workspace ready.
	code, out, errOut := runCLI(t, root, cliOpts{}, "init")
	if code != 1 || strings.Contains(out+errOut, "ready in") || !strings.Contains(errOut, "is not ready") {
		t.Errorf("init: exit %d\n%s%s\nwant 1, saying the workspace is not ready", code, out, errOut)
	}
	wantNoTaskTable(t, "init", errOut)
	code, out, _ = runCLI(t, root, cliOpts{}, "init", "--json")
	var js struct {
		Ready   bool   `json:"ready"`
		Problem string `json:"problem"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &js) != nil || js.Ready {
		t.Errorf("init --json: exit %d %s; want 1 and ready false", code, out)
	}
	wantNoTaskTable(t, "init --json", js.Problem)
	// validate refuses it (issue 19: a CI job must not pass a file no
	// reader finds a task in), saying how to convert it.
	code, out, _ = runCLI(t, root, cliOpts{}, "validate")
	if code != 1 || !strings.Contains(out, ".agent/DEVELOPMENT_MATRIX.md:1:1: error: the matrix has no task table") {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
	wantNoTaskTable(t, "validate", out)
	check()

	// A matrix with no table at all gets the header to add, not migrate.
	if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte("# Plans\n\nNothing yet.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, root, cliOpts{}, "task", "list")
	if code != 5 || !strings.Contains(errOut, "has no task table") || !strings.Contains(errOut, "| ID | Status | Pri |") || strings.Contains(errOut, "migrate") {
		t.Errorf("task list on a matrix without tables: exit %d %q", code, errOut)
	}
}

var idCellRe = regexp.MustCompile(`(?m)^\| [0-9a-f]{6} \|`)

func TestCLIMigrate(t *testing.T) {
	root := oldFormatWS(t)
	before := matrixOf(t, root)

	// --dry-run prints a unified diff and writes nothing.
	check := treehash.Guard(t, root)
	code, diff, errOut := runCLI(t, root, cliOpts{}, "migrate", "--dry-run")
	if code != 0 {
		t.Fatalf("migrate --dry-run: %d %s", code, errOut)
	}
	check()
	for _, want := range []string{"--- a/.agent/DEVELOPMENT_MATRIX.md\n+++ b/.agent/DEVELOPMENT_MATRIX.md\n",
		"\n+| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Backlog |\n",
		"\n-| Item | Priority | Difficulty | Backlog | Description |\n", "\n-| ~~Drop legacy API~~ | P1 | M | | done in #212 |\n"} {
		if !strings.Contains(diff, want) {
			t.Errorf("dry-run diff lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "would migrate 154 items") || !strings.Contains(errOut, "nothing was written") {
		t.Errorf("dry-run summary: %q", errOut)
	}

	// The real run writes what the dry run showed (but for the random IDs).
	code, out, errOut := runCLI(t, root, cliOpts{}, "migrate", "--json")
	if code != 0 {
		t.Fatalf("migrate: %d %s", code, errOut)
	}
	var res struct {
		File      string   `json:"file"`
		Migrated  int      `json:"migrated"`
		IDs       []string `json:"ids"`
		TableLine int      `json:"table_line"`
		Done      int      `json:"done"`
		Todo      int      `json:"todo"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Migrated != 154 || len(res.IDs) != 154 || res.TableLine != 30 || res.File != ".agent/DEVELOPMENT_MATRIX.md" {
		t.Fatalf("migrate --json: %v\n%s", err, out)
	}
	after := matrixOf(t, root)
	if patched := gitApply(t, before, diff); idCellRe.ReplaceAllString(patched, "| ID |") != idCellRe.ReplaceAllString(after, "| ID |") {
		t.Errorf("the dry-run diff, applied, does not give the migrated file")
	}
	if lines := strings.Split(after, "\n"); lines[res.TableLine-1] != "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Backlog |" {
		t.Errorf("line %d is %q, not the new header", res.TableLine, lines[res.TableLine-1])
	}

	// Every item is a task now.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "list", "--json")
	var tasks []struct {
		ID, Status, Created string
	}
	if code != 0 || json.Unmarshal([]byte(out), &tasks) != nil || len(tasks) != 154 {
		t.Fatalf("task list after migrate: %d %s (%d tasks)", code, errOut, len(tasks))
	}
	done := 0
	for i, tk := range tasks {
		if tk.ID != res.IDs[i] || tk.Created != "2026-11-21" {
			t.Errorf("task %d: %+v; want ID %s created today", i, tk, res.IDs[i])
		}
		if tk.Status == "DONE" {
			done++
		}
	}
	if done != res.Done || res.Done+res.Todo != 154 {
		t.Errorf("%d DONE tasks; migrate reported %d DONE, %d TODO", done, res.Done, res.Todo)
	}
	if code, out, _ := runCLI(t, root, cliOpts{}, "validate"); code != 0 || out != "" {
		t.Errorf("validate after migrate: %d\n%s", code, out)
	}
	code, id, errOut := runCLI(t, root, cliOpts{}, "task", "create", "-d", "After the migration", "-m", "coder")
	if code != 0 || !strings.Contains(matrixOf(t, root), "| "+strings.TrimSpace(id)+" | TODO | P2 | med | coder |") {
		t.Errorf("task create after migrate: %d %s", code, errOut)
	}

	// Once is enough: a second migrate has nothing to do, says so and
	// succeeds (issue 19), changing nothing.
	check = treehash.Guard(t, root)
	for _, args := range [][]string{{"migrate"}, {"migrate", "--dry-run"}} {
		code, out, errOut = runCLI(t, root, cliOpts{}, args...)
		if code != 0 || out != "" || errOut != "nothing to migrate: .agent/DEVELOPMENT_MATRIX.md has a task table (line 30) and no older-format Item table\n" {
			t.Errorf("%v on a migrated file: %d %q %q", args, code, out, errOut)
		}
	}
	check()
}

func TestCLIMigrateNothingToDo(t *testing.T) {
	root := fixtureWS(t) // a task table already
	check := treehash.Guard(t, root)
	if code, _, errOut := runCLI(t, root, cliOpts{}, "migrate"); code != 0 || !strings.Contains(errOut, "nothing to migrate: .agent/DEVELOPMENT_MATRIX.md has a task table (line 5)") {
		t.Errorf("migrate of a current matrix: %d %q", code, errOut)
	}
	check()
	if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte("# Plans\n\n| Size | Meaning |\n|---|---|\n| S | small |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check = treehash.Guard(t, root)
	if code, _, errOut := runCLI(t, root, cliOpts{}, "migrate", "--json"); code != 5 || !strings.Contains(errOut, `"kind":"refused"`) || !strings.Contains(errOut, "migrate cannot convert this file") {
		t.Errorf("migrate with no Item table: %d %q", code, errOut)
	}
	check()
	code, out, _ := runCLI(t, root, cliOpts{}, "migrate", "--help")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "agentinfra migrate --dry-run") {
		t.Errorf("migrate --help: %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, root, cliOpts{}, "migrate", "extra"); code != 2 {
		t.Errorf("migrate with an argument: exit %d, want 2", code)
	}
}
