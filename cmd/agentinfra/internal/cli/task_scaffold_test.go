package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// A row added by hand gets its folder from `task scaffold`, with the
// workspace's own template (bracket and brace placeholders) filled in.
func TestCLITaskScaffold(t *testing.T) {
	root := fixtureWS(t)
	tmpl := "# [ID]: [Task Name]\n\nID {{id}} · {{title}} · {{name}} · {{status}} · scaffolded {{date}}\n\n{{description}}\n\n" +
		"Left alone: [Owner], {{owner}}, - [ ] a checkbox.\n"
	if err := os.WriteFile(filepath.Join(root, ".agent", "templates", "unified_task.md"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	before := matrixOf(t, root)

	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "scaffold", "c3d4e5")
	if code != 0 || out != ".agent/tasks/c3d4e5_map_the_parser\n" {
		t.Fatalf("scaffold: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	dir := filepath.Join(root, ".agent", "tasks", "c3d4e5_map_the_parser")
	want := "# c3d4e5: Map the parser\n\nID c3d4e5 · Map the parser · Map the parser · BLOCKED · scaffolded 2026-11-21\n\nMap the parser\n\n" +
		"Left alone: [Owner], {{owner}}, - [ ] a checkbox.\n"
	if got := readText(t, filepath.Join(dir, "README.md")); got != want {
		t.Errorf("README:\n%s\nwant:\n%s", got, want)
	}
	for _, sub := range []string{"tracking", "artifacts"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s/: %v", sub, err)
		}
	}
	if matrixOf(t, root) != before {
		t.Error("scaffold changed the matrix")
	}

	// Refusals name the reason and write nothing.
	check := treehash.Guard(t, root)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"c3d4e5"}, 4, "task c3d4e5 already has a folder, .agent/tasks/c3d4e5_map_the_parser"}, // conflict
		{[]string{"a1b2c3"}, 4, ".agent/tasks/a1b2c3_add_retry_to_the_fetcher"},
		{[]string{"ffffff"}, 3, `no task "ffffff"; run ` + "`agentinfra task list`"}, // not found
	} {
		code, out, errOut := runCLI(t, root, cliOpts{}, append([]string{"task", "scaffold"}, c.args...)...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("scaffold %v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	if code, _, _ := runCLI(t, root, cliOpts{}, "task", "scaffold"); code != 2 {
		t.Errorf("scaffold without an ID: exit %d, want 2", code)
	}
	check()

	// --json, and --slug.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "scaffold", "c3d4e5", "--slug", "parser_map", "--json")
	var res struct {
		Task struct{ ID string } `json:"task"`
		Dir  string              `json:"dir"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Task.ID != "c3d4e5" || res.Dir != ".agent/tasks/c3d4e5_parser_map" {
		t.Errorf("scaffold --json: exit %d %q %q", code, out, errOut)
	}
}

// A matrix nobody may write is refused with a message that says so, and kept.
func TestCLIReadOnlyMatrix(t *testing.T) {
	root := fixtureWS(t)
	path := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	check := treehash.Guard(t, root)
	for _, args := range [][]string{
		{"task", "update", "a1b2c3", "--status", "DONE"},
		{"task", "create", "-d", "New work", "-m", "coder"},
		{"task", "scaffold", "c3d4e5"},
	} {
		code, _, errOut := runCLI(t, root, cliOpts{}, args...)
		if code != 1 || !strings.Contains(errOut, "matrix is read-only") || !strings.Contains(errOut, "chmod u+w") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 saying the matrix is read-only", args, code, errOut)
		}
	}
	check()
}
