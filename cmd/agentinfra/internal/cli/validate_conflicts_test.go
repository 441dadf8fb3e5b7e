package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

// conflicted is validMatrix merged with two edits of it by the driver's
// merge: T-2 changed two ways, and b5 added on both sides as two tasks.
func conflicted(t *testing.T) string {
	t.Helper()
	base := validMatrix + "| b2c3d4 | TODO | P2 | easy | coder | | | Second task | 2026-01-03 | 2026-01-03 |\n"
	ours := strings.Replace(base, "Second task", "Second task, ours", 1) + "| b5 | TODO | P2 | easy | coder | | | Login bug | 2026-01-03 | 2026-01-03 |\n"
	theirs := strings.Replace(base, "Second task", "Second task, theirs", 1) + "| b5 | TODO | P3 | easy | coder | | | Docs | 2026-01-03 | 2026-01-03 |\n" +
		"| c9 | TODO | P2 | easy | coder | | | Third | 2026-01-03 | 2026-01-03 |\n"
	res, err := matrix.Merge([]byte(base), []byte(ours), []byte(theirs), matrix.MergeOptions{})
	if err != nil || len(res.Conflicts) != 2 {
		t.Fatalf("merge: %v %v", err, res.Conflicts)
	}
	return string(res.Bytes)
}

func TestValidateNamesConflicts(t *testing.T) {
	src := conflicted(t)
	// A problem below the conflicts is named on its line of the file.
	src = strings.Replace(src, "| c9 | TODO |", "| c9 | NOPE |", 1)
	root := newValidateWorkspace(t, src)
	code, out, _ := runCLI(t, root, cliOpts{}, "validate")
	for _, want := range []string{
		`.agent/DEVELOPMENT_MATRIX.md:6:1: error: merge conflict in task b2c3d4 (lines 6-10): both sides changed Description (ours "Second task, ours", theirs "Second task, theirs"); finish with ` + "`agentinfra validate --fix=ours b2c3d4` or `agentinfra validate --fix=theirs b2c3d4`",
		`.agent/DEVELOPMENT_MATRIX.md:11:1: error: merge conflict (lines 11-15): task b5 was added on both sides as two different tasks (ours: "Login bug", theirs: "Docs")`,
		`.agent/DEVELOPMENT_MATRIX.md:16:`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate:\n%s\nwant it to hold: %s", out, want)
		}
	}
	if code != 1 || strings.Count(out, ": error: ") != 3 {
		t.Errorf("validate: exit %d, want 1 and three errors:\n%s", code, out)
	}
}

func TestValidateFixOursTheirs(t *testing.T) {
	src := conflicted(t)
	root := newValidateWorkspace(t, src)
	check := treehash.Guard(t, root)
	code, out, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix=theirs", "b2c3d4", "--dry-run")
	check()
	if code != 1 || !strings.Contains(out, "-<<<<<<< ours\n-| b2c3d4 | TODO | P2 | easy | coder | | | Second task, ours |") ||
		!strings.Contains(errOut, "would finish 1 conflict: kept theirs of b2c3d4 (line 6)") {
		t.Errorf("dry run: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "validate", "--fix=theirs", "b2c3d4")
	if code != 1 || !strings.Contains(out, "finished 1 conflict: kept theirs of b2c3d4 (line 6)") || !strings.Contains(out, "task b5 was added on both sides") {
		t.Errorf("--fix=theirs: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "validate", "--fix=ours", "b5")
	if code != 0 || !strings.Contains(out, "finished 1 conflict: kept ours of b5 (line 7)") {
		t.Errorf("--fix=ours: %d\n%s", code, out)
	}
	want := validMatrix + "| b2c3d4 | TODO | P2 | easy | coder | | | Second task, theirs | 2026-01-03 | 2026-01-03 |\n" +
		"| b5 | TODO | P2 | easy | coder | | | Login bug | 2026-01-03 | 2026-01-03 |\n" +
		"| c9 | TODO | P2 | easy | coder | | | Third | 2026-01-03 | 2026-01-03 |\n"
	if got := matrixOf(t, root); got != want {
		t.Errorf("matrix:\n%s\nwant:\n%s", got, want)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix=ours", "b5"); code != 3 || !strings.Contains(errOut, "the matrix holds no merge conflict: nothing to finish") {
		t.Errorf("--fix=ours with no conflict left: exit %d, want 3 (not found)\n%s", code, errOut)
	}
}

func TestValidateFixRenumber(t *testing.T) {
	root := newValidateWorkspace(t, conflicted(t))
	for rel, text := range map[string]string{"b5_login_bug": "# b5: Login bug\n", "b5_docs": "# b5: Docs\n"} {
		if err := os.MkdirAll(filepath.Join(root, ".agent", "tasks", rel), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ".agent", "tasks", rel, "README.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := runCLI(t, root, cliOpts{}, "validate", "--fix=renumber", "--json")
	if code != 1 || !strings.Contains(out, `"conflicts": [`) || !strings.Contains(out, `"from": "b5"`) {
		t.Fatalf("--fix=renumber: %d\n%s", code, out)
	}
	got := matrixOf(t, root)
	if !strings.Contains(got, "| b5 | TODO | P2 | easy | coder | | | Login bug |") {
		t.Errorf("ours' b5 is gone:\n%s", got)
	}
	tk := matrix.Parse([]byte(matrix.ResolveConflicts([]byte(got), func(c matrix.ConflictBlock) (string, bool) { return c.Ours, true }))).Tasks()
	var docs matrix.Task
	for _, x := range tk {
		if x.Description == "Docs" {
			docs = x
		}
	}
	if docs.ID == "" || docs.ID == "b5" || !matrix.ValidID(docs.ID) {
		t.Fatalf("theirs' b5 has ID %q", docs.ID)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".agent", "tasks", docs.ID+"_docs", "README.md")); err != nil || string(b) != "# "+docs.ID+": Docs\n" {
		t.Errorf("theirs' folder under %s: %q %v", docs.ID, b, err)
	}
}

func TestValidateFixConflictUsage(t *testing.T) {
	root := newValidateWorkspace(t, conflicted(t))
	check := treehash.Guard(t, root)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"validate", "--fix=ours"}, 2, "--fix=ours keeps one side of a task's merge conflict: name the task"},
		{[]string{"validate", "--fix", "theirs", "b5"}, 2, "write --fix=theirs, with '='"},
		{[]string{"validate", "--fix=move", "b5"}, 2, "cannot take --staged or FILE arguments"},
		{[]string{"validate", "--fix=mine", "b5"}, 2, "--fix=ours ID, --fix=theirs ID or --fix=renumber"},
		{[]string{"validate", "--fix=ours", "zz"}, 3, "no merge conflict holds task zz; the conflicted tasks are: b2c3d4, b5"},
		{[]string{"validate", "--fix=renumber", "b2c3d4"}, 2, "the conflict on line 6 is not one ID added on both sides as two tasks (it holds b2c3d4, changed on both sides)"},
		// Every other write waits for the conflicts to be finished.
		{[]string{"validate", "--fix"}, 5, "the matrix holds 2 unfinished merge conflicts (the first on line 6)"},
	} {
		code, out, errOut := runCLI(t, root, cliOpts{}, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s%s", c.args, code, c.code, c.says, out, errOut)
		}
	}
	check()
	// A write takes the lock (its file stays, as after any refused write)
	// and refuses under it.
	before := matrixOf(t, root)
	code, _, errOut := runCLI(t, root, cliOpts{}, "task", "update", "a1b2c3", "--status", "DONE")
	if code != 5 || !strings.Contains(errOut, "the matrix holds 2 unfinished merge conflicts (the first on line 6), so nothing was changed") || matrixOf(t, root) != before {
		t.Errorf("task update on a conflicted matrix: exit %d, want 5 and no change\n%s", code, errOut)
	}
}
