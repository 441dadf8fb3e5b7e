package task

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// The repository's own .agent/ is the example workspace README runs against:
// it must validate without a single diagnostic, hold a task in every status,
// and keep the template in step with the embedded one.
func TestRepoExampleWorkspace(t *testing.T) {
	ws, err := workspace.New("..")
	if err != nil {
		t.Fatal(err)
	}
	d, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ds := Validate(ws, d, ".agent/DEVELOPMENT_MATRIX.md", func(string) string { return "" }); len(ds) > 0 {
		for _, x := range ds {
			t.Error(x)
		}
	}
	seen := map[string]bool{}
	for _, tk := range d.Tasks() {
		seen[tk.Status] = true
		if dir, _ := ws.FindTaskDir(tk.ID); dir == "" {
			t.Errorf("task %s has no folder in .agent/tasks or .agent/archive", tk.ID)
		} else if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
			t.Errorf("task %s: %v", tk.ID, err)
		}
	}
	for _, s := range matrix.Statuses {
		if !seen[s] {
			t.Errorf("no example task is %s", s)
		}
	}
	if archived, _ := os.ReadDir(ws.ArchiveDir()); len(archived) == 0 {
		t.Error("no archived example task")
	}
	tmpl, err := os.ReadFile(filepath.Join(ws.TemplatesDir(), "unified_task.md"))
	if err != nil || string(tmpl) != DefaultTemplate() {
		t.Errorf(".agent/templates/unified_task.md differs from task/skeleton/templates/unified_task.md (%v)", err)
	}
	created, err := Init(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(created, ".agent/.gitignore") {
		t.Error("init writes no .gitignore")
	}
}
