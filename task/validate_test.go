package task

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
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
	// Notes and drafts next to the modes are not modes: a row naming one is warned about.
	mk(filepath.Join(agent, "agents", "README.md"), "# Our modes\n")
	mk(filepath.Join(agent, "agents", "_draft.md"), "# draft\n")
	mk(filepath.Join(agent, "skills", "_template", "SKILL.md"), "---\nname: template\n---\n")
	// Folders of dated work are not task folders, unless a row has their prefix as ID.
	mk(filepath.Join(agent, "tasks", "260116_bug_fixes", "notes.md"), "x\n")
	mk(filepath.Join(agent, "tasks", "261301_not_a_date", "notes.md"), "x\n")
	mk(filepath.Join(agent, "tasks", "260117_fix-login", "README.md"), "x\n")
	mk(filepath.Join(agent, "skills", "go-testing", "SKILL.md"), "---\nname: go-testing\n---\n")
	mk(filepath.Join(global, "global-skill", "SKILL.md"), "---\nname: global-skill\n---\n")
	mk(filepath.Join(agent, "skills", "no-skill-md", "README.md"), "not a skill\n")
	mk(filepath.Join(agent, "tasks", "a00001_has-row", "README.md"), "x\n")
	mk(filepath.Join(agent, "tasks", "a0ffff_orphan", "README.md"), "x\n")
	src := "| ID | Status | Mode | Skills | Description |\n|---|---|---|---|---|\n" +
		"| a00001 | IN_PROGRESS | coder | go-testing, global-skill | fine |\n" +
		"| a00002 | REVIEW | ghost | no-skill-md | no folder, unknown mode and skill |\n" +
		"| a00003 | TODO | | | fine without folder |\n" +
		"| a00004 | NOPE | coder | | an error too |\n" +
		"| a00005 | TODO | README | _template | not a mode, not a skill |\n" +
		"| a00006 | TODO | _draft | | not a mode |\n" +
		"| 260117 | IN_PROGRESS | | | a row whose ID looks like a date owns its folder |\n"
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
	for _, d := range Validate(ws, matrix.Parse([]byte(src)), "M.md", getenv) {
		got = append(got, d.String())
	}
	want := []string{
		`M.md:1:1: warning: task folder .agent/tasks/261301_not_a_date has no row in the matrix: if it is task 261301's folder, the row is missing (add it, or archive the folder); a folder of other work (a batch of fixes, notes) can stay as it is`,
		`M.md:1:1: warning: task folder .agent/tasks/a0ffff_orphan has no row in the matrix: if it is task a0ffff's folder, the row is missing (add it, or archive the folder); a folder of other work (a batch of fixes, notes) can stay as it is`,
		`M.md:4:12: warning: task a00002 is REVIEW but has no folder .agent/tasks/a00002_*; run ` + "`agentinfra task scaffold a00002`" + ` to create it, or restore it`,
		`M.md:4:21: warning: mode "ghost" has no .agent/agents/ghost.md; create it or fix the Mode`,
		`M.md:4:29: warning: skill "no-skill-md" has no .agent/skills/no-skill-md/SKILL.md (nor a global one); create it or fix the Skills`,
		`M.md:6:12: error: unknown status "NOPE"; valid: TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE`,
		`M.md:7:19: warning: mode "README" is not a mode: README.md and files starting with '_' or '.' in .agent/agents/ are notes; fix the Mode`,
		`M.md:7:28: warning: skill "_template" has no .agent/skills/_template/SKILL.md (nor a global one); create it or fix the Skills`,
		`M.md:8:19: warning: mode "_draft" is not a mode: README.md and files starting with '_' or '.' in .agent/agents/ are notes; fix the Mode`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !matrix.HasErrors(Validate(ws, matrix.Parse([]byte(src)), "M.md", getenv)) {
		t.Error("HasErrors = false")
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
	// A file named like a task folder is no folder: not warned about.
	if err := os.WriteFile(filepath.Join(root, ".agent", "tasks", "f0f0f0_notes.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	src := "| ID | Status | Description |\n|---|---|---|\n| a00001 | TODO | has a folder |\n"
	var got []string
	for _, d := range Validate(ws, matrix.Parse([]byte(src)), "M.md", func(string) string { return "" }) {
		folder, _, _ := strings.Cut(strings.TrimPrefix(d.Message, "task folder .agent/tasks/"), " ")
		got = append(got, folder)
	}
	want := []string{"a0ffff_first", "b0ffff_also", "b0ffff_second", "c0ffee_z-last", "d0d0d0_fourth", "e0e0e0_fifth"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("orphan folders warned about: %v\nwant, in name order: %v", got, want)
	}
}

// A config whose statuses leave out a status the workflow moves tasks to
// is warned about by validate, at the statuses list, with the alias to
// add: before an agent's claim or run end is refused.
func TestValidateWarnsAboutAMissingWorkflowWord(t *testing.T) {
	ws := newWS(t)
	writeFile(t, filepath.Join(ws.AgentDir(), "config.yaml"),
		"# our words\nmatrix:\n  statuses: [TODO, DOING, DONE, BLOCKED]\n  aliases:\n    status: { BLOCKED: BLOCKED }\n")
	st, err := OpenStore(ws)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, diag := range Validate(ws, d, "M.md", nil) {
		if diag.File != "M.md" {
			got = append(got, diag.String())
		}
	}
	want := []string{
		".agent/config.yaml:3:1: warning: the matrix vocabulary has no word for a workflow status: agentinfra moves tasks to IN_PROGRESS, which .agent/config.yaml does not allow (statuses: TODO, DOING, DONE, BLOCKED); add it to matrix.statuses, or alias it to your word: matrix.aliases.status: {IN_PROGRESS: DOING}",
		".agent/config.yaml:3:1: warning: the matrix vocabulary has no word for a workflow status: agentinfra moves tasks to REVIEW, which .agent/config.yaml does not allow (statuses: TODO, DOING, DONE, BLOCKED); add it to matrix.statuses, or alias it to your word: matrix.aliases.status: {REVIEW: YOUR_WORD}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// With the aliases, nothing to say.
	writeFile(t, filepath.Join(ws.AgentDir(), "config.yaml"),
		"matrix:\n  statuses: [TODO, DOING, DONE, BLOCKED, Waiting for review]\n  aliases:\n    status: { IN_PROGRESS: DOING, REVIEW: Waiting for review }\n")
	ws, _ = workspace.New(ws.Root) // the next process: a workspace reads its config once
	if st, err = OpenStore(ws); err != nil {
		t.Fatal(err)
	}
	if d, err = st.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, diag := range Validate(ws, d, "M.md", nil) {
		if diag.File != "M.md" {
			t.Errorf("with every word: %s", diag)
		}
	}
}

// The folder of a row that could not be read is not told to get a row: it
// has one; the advice is to repair it (issue 19).
func TestFolderOfAnUnreadableRow(t *testing.T) {
	ws := newWS(t)
	src := "| ID | Status | Description |\n|---|---|---|\n| b2c3d4 | TODO | one | extra |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws.TasksDir(), "b2c3d4_one"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := matrix.Parse([]byte(src))
	var got []string
	for _, dg := range Validate(ws, d, "M.md", func(string) string { return "" }) {
		got = append(got, dg.Message)
	}
	want := "task folder .agent/tasks/b2c3d4_one belongs to task b2c3d4, whose row (line 3) could not be read; repair that row (see its error), do not add another"
	if !slices.Contains(got, want) {
		t.Errorf("diagnostics:\n%s\nwant %q", strings.Join(got, "\n"), want)
	}
}
