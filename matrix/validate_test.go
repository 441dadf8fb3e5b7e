package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/workspace"
)

func TestValidateWorkspaceWarnings(t *testing.T) {
	root := t.TempDir()
	global := t.TempDir()
	mk := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent := filepath.Join(root, ".agent")
	mk(filepath.Join(agent, "agents", "coder.md"), "# coder\n")
	mk(filepath.Join(agent, "skills", "go-testing", "SKILL.md"), "---\nname: go-testing\n---\n")
	mk(filepath.Join(global, "global-skill", "SKILL.md"), "---\nname: global-skill\n---\n")
	mk(filepath.Join(agent, "skills", "no-skill-md", "README.md"), "not a skill\n")
	mk(filepath.Join(agent, "tasks", "a00001_has-row", "README.md"), "x\n")
	mk(filepath.Join(agent, "tasks", "a0ffff_orphan", "README.md"), "x\n")
	src := "| ID | Status | Mode | Skills | Description |\n|---|---|---|---|---|\n" +
		"| a00001 | IN_PROGRESS | coder | go-testing, global-skill | fine |\n" +
		"| a00002 | REVIEW | ghost | no-skill-md | no folder, unknown mode and skill |\n" +
		"| a00003 | TODO | | | fine without folder |\n" +
		"| a00004 | NOPE | coder | | an error too |\n"
	mk(filepath.Join(agent, "DEVELOPMENT_MATRIX.md"), src)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == workspace.EnvGlobalSkills {
			return global
		}
		return ""
	}
	var got []string
	for _, d := range Validate(ws, Parse([]byte(src)), "M.md", getenv) {
		got = append(got, d.String())
	}
	want := []string{
		`M.md:1:1: warning: task folder .agent/tasks/a0ffff_orphan has no row in the matrix; add a row for a0ffff or archive the folder`,
		`M.md:4:12: warning: task a00002 is REVIEW but has no folder .agent/tasks/a00002_*; create it with ` + "`agentinfra task create`" + ` or restore it`,
		`M.md:4:21: warning: mode "ghost" has no .agent/agents/ghost.md; create it or fix the Mode`,
		`M.md:4:29: warning: skill "no-skill-md" has no .agent/skills/no-skill-md/SKILL.md (nor a global one); create it or fix the Skills`,
		`M.md:6:12: error: unknown status "NOPE"; valid: TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !HasErrors(Validate(ws, Parse([]byte(src)), "M.md", getenv)) {
		t.Error("HasErrors = false")
	}
}

func TestValidateWarnsWithoutTaskTable(t *testing.T) {
	got := Validate(nil, Parse([]byte("# Notes\n\n| Term | Meaning |\n|---|---|\n| P1 | urgent |\n")), "m.md", nil)
	if len(got) != 1 || got[0].Severity != SeverityWarning || !strings.Contains(got[0].String(), "m.md:1:1: warning: no task table found") {
		t.Fatalf("diagnostics = %v; want one warning that there is no task table", got)
	}
	if got := Validate(nil, Parse([]byte(CanonicalHeader)), "m.md", nil); len(got) != 0 {
		t.Fatalf("an empty task table is fine; got %v", got)
	}
}

// Folders are read unsorted (os.ReadDir's sort is most of the checks' time
// with thousands of folders); the warnings still come in name order.
func TestValidateListsOrphanFoldersInNameOrder(t *testing.T) {
	root := t.TempDir()
	names := []string{"c0ffee_z-last", "b0ffff_second", "a0ffff_first", "b0ffff_also", "a00001_has-row", "e0e0e0_fifth", "d0d0d0_fourth"}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, ".agent", "tasks", n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	src := "| ID | Status | Description |\n|---|---|---|\n| a00001 | TODO | has a folder |\n"
	var got []string
	for _, d := range Validate(ws, Parse([]byte(src)), "M.md", func(string) string { return "" }) {
		folder, _, _ := strings.Cut(strings.TrimPrefix(d.Message, "task folder .agent/tasks/"), " ")
		got = append(got, folder)
	}
	want := []string{"a0ffff_first", "b0ffff_also", "b0ffff_second", "c0ffee_z-last", "d0d0d0_fourth", "e0e0e0_fifth"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("orphan folders warned about: %v\nwant, in name order: %v", got, want)
	}
}

func TestNumTasksCountsTaskRows(t *testing.T) {
	src := "| ID | Status |\n|---|---|\n| a00001 | TODO |\n| a00002 | DONE |\n\n| Term | Meaning |\n|---|---|\n| P1 | urgent |\n"
	d := Parse([]byte(src))
	if got, want := d.NumTasks(), len(d.IDs()); got != want || got != 2 {
		t.Fatalf("NumTasks() = %d, len(IDs()) = %d; want 2 task rows", got, want)
	}
}
