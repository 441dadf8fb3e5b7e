package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

func TestCLIInit(t *testing.T) {
	root := t.TempDir()
	code, out, errOut := runCLI(t, root, cliOpts{}, "init")
	if code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	for _, want := range []string{"created .agent/\n", "created .agent/DEVELOPMENT_MATRIX.md\n", "created .agent/agents/coder.md\n",
		"created .agent/templates/unified_task.md\n", "created .agent/tasks/\n", "created .agent/archive/\n", "created .agent/skills/\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	check := treehash.Guard(t, root)
	code, out, _ = runCLI(t, root, cliOpts{}, "init")
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("second init: %d %q", code, out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "init", "--json")
	var js struct {
		Root    string   `json:"root"`
		Created []string `json:"created"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.Created == nil || len(js.Created) != 0 || js.Root != root {
		t.Errorf("init --json: %d %s", code, out)
	}
	check()

	// --root and $AGENTINFRA_ROOT choose where.
	other := t.TempDir()
	if code, _, _ := runCLI(t, root, cliOpts{}, "init", "--root", other); code != 0 || !isFile(filepath.Join(other, ".agent/DEVELOPMENT_MATRIX.md")) {
		t.Error("init --root did not create the workspace there")
	}
	third := t.TempDir()
	if code, _, _ := runCLI(t, root, cliOpts{Env: map[string]string{"AGENTINFRA_ROOT": third}}, "init"); code != 0 || !isFile(filepath.Join(third, ".agent/DEVELOPMENT_MATRIX.md")) {
		t.Error("init with AGENTINFRA_ROOT did not create the workspace there")
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "init", "extra"); code != 2 {
		t.Errorf("init with an argument: %d %s", code, errOut)
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func TestCLINoWorkspace(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"task", "list"}, {"task", "create", "-d", "x", "-m", "coder"}, {"task", "show", "a1b2c3"}} {
		code, _, errOut := runCLI(t, dir, cliOpts{}, args...)
		if code != 3 || !strings.Contains(errOut, "agentinfra init") { // not found
			t.Errorf("%v without a workspace: %d %q; want 3 suggesting agentinfra init", args, code, errOut)
		}
	}
	// Discovery walks up from a subfolder; --root and $AGENTINFRA_ROOT override.
	root := fixtureWS(t)
	sub := filepath.Join(root, "src", "deep")
	os.MkdirAll(sub, 0o755)
	for _, c := range []struct {
		cwd string
		o   cliOpts
		arg []string
	}{
		{sub, cliOpts{}, nil},
		{dir, cliOpts{}, []string{"--root", root}},
		{dir, cliOpts{Env: map[string]string{"AGENTINFRA_ROOT": root}}, nil},
	} {
		code, out, errOut := runCLI(t, c.cwd, c.o, append([]string{"task", "list", "--status", "DONE"}, c.arg...)...)
		if code != 0 || !strings.HasPrefix(out, "e5f6a7\t") {
			t.Errorf("list from %s %v: %d %q %q", c.cwd, c.arg, code, out, errOut)
		}
	}
}

func TestCLITaskCreate(t *testing.T) {
	root := fixtureWS(t)
	before := matrixOf(t, root)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "create", "--description", "Add a cache | with pipes", "--mode", "coder",
		"--priority", "p1", "--difficulty", "hard", "--skills", "go-testing", "--agent", "coder", "--agent", "@reviewer")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	if !matrix.ValidID(id) || out != id+"\n" {
		t.Fatalf("create printed %q, want the new ID alone", out)
	}
	// The row goes at the end of the task table; everything else keeps its bytes.
	row := "| " + id + " | TODO | P1 | hard | coder | go-testing | @coder @reviewer | Add a cache \\| with pipes | 2026-11-21 | 2026-11-21 |\n"
	want := strings.Replace(before, "\n\n## Notes", "\n"+strings.TrimSuffix(row, "\n")+"\n\n## Notes", 1)
	if got := matrixOf(t, root); got != want {
		t.Errorf("matrix after create:\n%s\nwant:\n%s", got, want)
	}
	dir := filepath.Join(root, ".agent/tasks", id+"_add_a_cache_with_pipes")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"README.md", "artifacts", "tracking"}) {
		t.Errorf("task folder holds %v", names)
	}
	if readme := readText(t, filepath.Join(dir, "README.md")); !strings.HasPrefix(readme, "# "+id+": Add a cache | with pipes\n") {
		t.Errorf("README starts %q", readme[:min(60, len(readme))])
	}

	// --json: the row and the folder; defaults P2/med; explicit slug.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "create", "-d", "Map the code", "-m", "explorer", "--slug", "map", "--json")
	if code != 0 {
		t.Fatalf("create --json: %d %s", code, errOut)
	}
	var js struct {
		Task map[string]any `json:"task"`
		Dir  string         `json:"dir"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("create --json output %q: %v", out, err)
	}
	id2, _ := js.Task["id"].(string)
	if js.Dir != ".agent/tasks/"+id2+"_map" || js.Task["status"] != "TODO" || js.Task["priority"] != "P2" || js.Task["difficulty"] != "med" ||
		js.Task["created"] != "2026-11-21" || js.Task["skills"] == nil || js.Task["agents"] == nil {
		t.Errorf("create --json = %s", out)
	}
	if !isFile(filepath.Join(root, js.Dir, "README.md")) {
		t.Errorf("no README in %s", js.Dir)
	}
}

// Every failing command leaves the workspace byte-identical.
func TestCLITaskErrorsChangeNothing(t *testing.T) {
	root := fixtureWS(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"task", "create", "-m", "coder"}, 2, "--description is required"},
		{[]string{"task", "create", "-d", "x"}, 2, "--mode is required"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "--skills", "go-testin"}, 5, "valid skills: go-testing; create .agent/skills/go-testin/SKILL.md first; pass --force to do it anyway"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "--slug", "../x"}, 2, "slug"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "--slug", ".x"}, 2, "must not start with '.'"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "-p", "P7"}, 2, "P1, P2, P3, P4"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "--difficulty", "meh"}, 2, "easy"},
		{[]string{"task", "create", "-d", "x", "-m", "coder", "--bogus"}, 2, "unknown flag"},
		{[]string{"task", "update", "a1b2c4", "--status", "DONE"}, 3, "did you mean a1b2c3?"},
		{[]string{"task", "update", "a1b2c3", "--status", "PAUSED"}, 2, "TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"},
		{[]string{"task", "update", "a1b2c3"}, 2, "nothing to change"},
		{[]string{"task", "update", "a1b2c3", "--set", "novalue"}, 2, "COLUMN=VALUE"},
		{[]string{"task", "update", "a1b2c3", "--set", "Owner=ana"}, 2, `invalid --set column "Owner": the task table on line 5 has no such column`},
		{[]string{"task", "update", "a1b2c3", "-p", "P9"}, 2, `invalid --priority "P9": unknown priority; valid: P1, P2, P3, P4`},
		{[]string{"task", "update", "a1b2c3", "--set", "Diff=huge"}, 2, `invalid --set difficulty "huge": unknown difficulty; valid: easy, med, hard`},
		{[]string{"task", "update", "a1b2c3", "--agent", "two words"}, 2, "@mention"},
		{[]string{"task", "update"}, 2, "accepts 1 arg"},
		{[]string{"task", "list", "--status", "PAUSED"}, 2, "valid: TODO"},
		{[]string{"task", "list", "--sort", "size"}, 2, "file, priority, created, updated"},
		{[]string{"task", "list", "--limit", "-1"}, 2, "limit"},
		{[]string{"task", "show", "zzzzzz"}, 3, "agentinfra task list"},
		{[]string{"task", "show", "a1b2"}, 3, "did you mean a1b2c3?"},
		{[]string{"task", "archive", "a1b2c3"}, 4, "task a1b2c3 is TODO"},
		{[]string{"task", "archive", "c3d4e5"}, 4, "task c3d4e5 is BLOCKED"},
		{[]string{"task", "archive", "e5f6a8"}, 3, "did you mean e5f6a7?"},
		{[]string{"task", "archive"}, 2, "either a task ID or --all-done"},
		{[]string{"task", "archive", "e5f6a7", "--all-done"}, 2, "either a task ID or --all-done"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			check := treehash.Guard(t, root)
			code, out, errOut := runCLI(t, root, cliOpts{}, c.args...)
			if code != c.code || !strings.Contains(errOut, c.msg) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q (stdout %q)", code, errOut, c.code, c.msg, out)
			}
			check()
		})
	}
}

func TestCLITaskUpdate(t *testing.T) {
	root := fixtureWS(t)
	before := matrixOf(t, root)
	readmePath := filepath.Join(root, ".agent/tasks/a1b2c3_add_retry_to_the_fetcher/README.md")
	readme0 := readText(t, readmePath)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "update", "a1b2c3", "--status", "in_progress", "--agent", "@coder", "--agent", "reviewer")
	if code != 0 {
		t.Fatalf("update: %d %s", code, errOut)
	}
	wantOut := "updated a1b2c3: status TODO → IN_PROGRESS, agents +@reviewer\n" +
		"logged the status change in .agent/tasks/a1b2c3_add_retry_to_the_fetcher/README.md\n"
	if out != wantOut {
		t.Errorf("update printed %q, want %q", out, wantOut)
	}
	want := strings.Replace(before,
		"| a1b2c3 | TODO | P2 | med | coder | go-testing | @coder | Add retry to the fetcher | 2026-11-01 | 2026-11-02 |",
		"| a1b2c3 | IN_PROGRESS | P2 | med | coder | go-testing | @coder @reviewer | Add retry to the fetcher | 2026-11-01 | 2026-11-21 |", 1)
	if got := matrixOf(t, root); got != want || got == before {
		t.Errorf("matrix after update:\n%s", got)
	}
	if got := readText(t, readmePath); got != readme0+"- 2026-11-21 14:05: status TODO → IN_PROGRESS\n" {
		t.Errorf("README after update:\n%s", got)
	}

	// Only what is given changes; --skills replaces, --set reaches any column; --json.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "update", "d4e5f6", "--priority", "1", "--skills", "", "--set", "Description=Review the lock code again", "--json")
	if code != 0 {
		t.Fatalf("update --json: %d %s", code, errOut)
	}
	var js struct {
		Task    matrix.Task `json:"task"`
		Before  matrix.Task `json:"before"`
		Changed []string    `json:"changed"`
		LogFile string      `json:"log_file"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(js.Changed, []string{"priority", "skills", "description"}) || js.Task.Priority != "P1" || len(js.Task.Skills) != 0 ||
		js.Before.Priority != "P2" || js.LogFile != "" {
		t.Errorf("update --json = %s", out)
	}
	if !strings.Contains(matrixOf(t, root), "| d4e5f6 | REVIEW | P1 | med | reviewer |  | @reviewer | Review the lock code again | 2026-11-10 | 2026-11-21 |\n") {
		t.Errorf("matrix after --set:\n%s", matrixOf(t, root))
	}
	// Adding an agent already there changes nothing but Updated.
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "update", "d4e5f6", "--agent", "REVIEWER")
	if code != 0 || out != "d4e5f6: no field changed (Updated is 2026-11-21)\n" {
		t.Errorf("no-op update: %d %q", code, out)
	}
	// An unknown mode is refused as an unknown skill is (issue 19), naming
	// close modes and --force; with --force it is written, with a warning.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "update", "d4e5f6", "--mode", "codr")
	if code != 5 || out != "" || errOut != "error: unknown mode \"codr\"; did you mean coder?; valid modes: coder, explorer, oracle, reviewer; create .agent/agents/codr.md first; pass --force to do it anyway\n" {
		t.Errorf("unknown mode: %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "update", "d4e5f6", "--mode", "codr", "--force")
	if code != 0 || out != "updated d4e5f6: mode\n" || errOut != "warning: mode \"codr\" has no .agent/agents/codr.md; did you mean coder?; the task was written with it\n" {
		t.Errorf("unknown mode, --force: %d %q %q", code, out, errOut)
	}
	// A mode rows already use is the workspace's own word: written, with a warning.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "create", "-d", "x", "-m", "codr", "--json")
	var cj struct {
		Task     struct{ Mode string } `json:"task"`
		Warnings []string              `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &cj); code != 0 || err != nil || cj.Task.Mode != "codr" || len(cj.Warnings) != 1 ||
		!strings.Contains(errOut, "did you mean coder?") {
		t.Errorf("create with a mode a row uses: %d %q %q", code, out, errOut)
	}
}

func TestCLITaskShow(t *testing.T) {
	root := fixtureWS(t)
	check := treehash.Guard(t, root)
	defer check()
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "show", "b2c3d4")
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	readme := readText(t, filepath.Join(root, ".agent/tasks/b2c3d4_make_the_store_lock_fair_under_heavy/README.md"))
	want := "ID:           b2c3d4\nStatus:       IN_PROGRESS\nPriority:     P1\nDifficulty:   hard\nMode:         coder\nSkills:       \n" +
		"Agents:       @coder @reviewer\nDescription:  Make the store lock fair under heavy contention from many writers\n" +
		"Created:      2026-10-01\nUpdated:      2026-11-20\nFolder:       .agent/tasks/b2c3d4_make_the_store_lock_fair_under_heavy\n\n" +
		"── .agent/tasks/b2c3d4_make_the_store_lock_fair_under_heavy/README.md ──\n" + readme
	if out != want {
		t.Errorf("show:\n%s\nwant:\n%s", out, want)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "show", "c3d4e5", "--json")
	var js struct {
		Task     matrix.Task `json:"task"`
		Dir      string      `json:"dir"`
		Archived bool        `json:"archived"`
		Readme   string      `json:"readme"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.Task.ID != "c3d4e5" || js.Dir != "" || js.Readme != "" {
		t.Errorf("show --json of a task without folder: %s", out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "show", "c3d4e5")
	if code != 0 || !strings.Contains(out, "Folder:       (none)\n") {
		t.Errorf("show without folder:\n%s", out)
	}
}

func TestCLITaskArchive(t *testing.T) {
	root := fixtureWS(t)
	before := matrixOf(t, root)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "archive", "e5f6a7")
	if code != 0 || out != "archived e5f6a7: .agent/tasks/e5f6a7_decide_the_id_format → .agent/archive/e5f6a7_decide_the_id_format\n" {
		t.Fatalf("archive: %d %q %s", code, out, errOut)
	}
	if !isFile(filepath.Join(root, ".agent/archive/e5f6a7_decide_the_id_format/tracking/notes.md")) || isFile(filepath.Join(root, ".agent/tasks/e5f6a7_decide_the_id_format/README.md")) {
		t.Error("folder not moved")
	}
	if matrixOf(t, root) != before {
		t.Error("archive changed the matrix")
	}
	// show finds it in the archive.
	if _, out, _ := runCLI(t, root, cliOpts{}, "task", "show", "e5f6a7"); !strings.Contains(out, "Folder:       .agent/archive/e5f6a7_decide_the_id_format (archived)\n") {
		t.Errorf("show after archive:\n%s", out)
	}
	check := treehash.Guard(t, root)
	if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "archive", "e5f6a7"); code != 4 || !strings.Contains(errOut, "already archived") {
		t.Errorf("archive twice: %d %s", code, errOut)
	}
	check()

	// --all-done moves every DONE task with a folder.
	for _, id := range []string{"a1b2c3", "d4e5f6"} {
		if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "update", id, "--status", "DONE"); code != 0 {
			t.Fatal(errOut)
		}
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "archive", "--all-done", "--json")
	var moved []task.Archived
	if code != 0 || json.Unmarshal([]byte(out), &moved) != nil || len(moved) != 2 || moved[0].ID != "a1b2c3" ||
		moved[1].To != ".agent/archive/d4e5f6_review_the_lock_code" {
		t.Errorf("archive --all-done --json: %d %s", code, out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "archive", "--all-done", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("nothing left: %d %q", code, out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "archive", "--all-done")
	if code != 0 || !strings.Contains(out, "nothing to archive") {
		t.Errorf("nothing left, text: %d %q", code, out)
	}
}

func TestCLITaskHelpHasExamples(t *testing.T) {
	for _, sub := range []string{"create", "update", "list", "show", "archive"} {
		code, out, _ := runCLI(t, t.TempDir(), cliOpts{}, "task", sub, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "agentinfra task "+sub) {
			t.Errorf("task %s --help: %d\n%s", sub, code, out)
		}
	}
}

// A duplicated ID: list shows both rows, names the duplicate on stderr and
// exits 1; show, prompt and update refuse to pick one (issue 19).
func TestDuplicateIDsAreNamed(t *testing.T) {
	root := newValidateWorkspace(t, "# M\n\n| ID | Status | Pri | Diff | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|---|---|\n"+
		"| T-1 | TODO | P1 | easy | coder | First. | 2026-01-21 | 2026-01-21 |\n"+
		"| T-2 | TODO | P2 | easy | coder | Second. | 2026-01-21 | 2026-01-21 |\n"+
		"| T-1 | DONE | P3 | easy | coder | Copied by hand. | 2026-01-21 | 2026-01-21 |\n")
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list")
	if code != 1 || strings.Count(out, "T-1\t") != 2 || !strings.Contains(errOut, ".agent/DEVELOPMENT_MATRIX.md:7:1: error: duplicate ID T-1: also on line 5") {
		t.Errorf("task list: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if code, _, _ := runCLI(t, root, cliOpts{}, "task", "list", "--status", "TODO"); code != 0 {
		t.Errorf("a filtered list that holds one row of the ID: exit %d, want 0", code)
	}
	for _, args := range [][]string{{"task", "show", "T-1"}, {"prompt", "T-1"}, {"task", "update", "T-1", "--status", "BLOCKED"}, {"task", "context", "T-1"}} {
		code, out, errOut := runCLI(t, root, cliOpts{}, args...)
		if code != 5 || out != "" || !strings.Contains(errOut, "ID T-1 is on 2 rows (lines 5, 7)") { // refused
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
