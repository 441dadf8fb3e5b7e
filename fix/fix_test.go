package fix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

var now = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// brokenMatrix is written the way people write: uneven padding, rows broken
// over lines (a list, a paragraph, a code fence with pipes, a heading), a
// continued row with no ID, one ID on two continued rows, a 9-cell row.
const brokenMatrix = `# Inkwell matrix

Agents: pick a TODO row.

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|---|---|---|---|---|---|---|---|---|---|
| 260101111619 | DONE | P1 | med | code | | @codex |Refactor window state| 2026-01-01 | 2026-01-02 16:02:43 |
|  260101184335 | TODO |P1|  easy | code |  |  | Investigate flaky schema. It fails on CI only  
1. reproduce with ` + "`cargo tauri dev`" + `
2. add a failing test
| 2026-01-01 18:43:35 |	2026-01-04 |
| 260103114541 | DONE | P2 | hard |	code |     |  | Add tests for note editor
Repro:
` + "```bash" + `
cat notes.log | grep -c 'conflict'   # a | b
` + "```" + `
| 2026-01-03 | 2026-01-05 |
|  | TODO | P3 | easy | code | | | Row someone forgot to number

## Notes
keep the heading | 2026-01-04 | 2026-01-04 |
| 260105000000 | TODO | P2 | med | code | | | First of two
with the same ID | 2026-01-05 | 2026-01-05 |
| 260105000000 | TODO | P2 | med | code | | | Second of two
also broken | 2026-01-05 | 2026-01-05 |
| 9c9c9c | TODO | P2 | med | code | | forgot a cell | 2026-01-06 | 2026-01-06 |
| 260107000000 | TODO | P2 | med | code | | | Last row, fine | 2026-01-07 | 2026-01-07 |

Prose after the table, kept.
`

func newWorkspace(t *testing.T, files map[string]string) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	files[".agent/agents/code.md"] = "code\n"
	for rel, s := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func readFile(t *testing.T, ws *workspace.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ids(t *testing.T, src string) []string {
	var out []string
	for _, tk := range matrix.Parse([]byte(src)).Tasks() {
		out = append(out, tk.ID)
	}
	slices.Sort(out)
	return out
}

func TestRunJoin(t *testing.T) {
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": brokenMatrix})
	rep, err := Run(context.Background(), ws, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := "fixed 5 rows: joined 260101184335 (lines 8-11), 260103114541 (lines 12-17), row at line 18 (lines 18-21), 260105000000 (lines 22-23), 260105000000 (lines 24-25)"
	if got := rep.Summary(); got != want {
		t.Errorf("Summary()\n got %s\nwant %s", got, want)
	}
	got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md")
	for _, line := range []string{
		"| 260101184335 | TODO | P1 | easy | code |  |  | Investigate flaky schema. It fails on CI only<br>1. reproduce with `cargo tauri dev`<br>2. add a failing test | 2026-01-01 18:43:35 | 2026-01-04 |\n",
		"| 260103114541 | DONE | P2 | hard | code |  |  | Add tests for note editor<br>Repro:<br>` ```bash `<br>`cat notes.log \\| grep -c 'conflict'   # a \\| b`<br>` ``` ` | 2026-01-03 | 2026-01-05 |\n",
		"|  | TODO | P3 | easy | code |  |  | Row someone forgot to number<br><br>## Notes<br>keep the heading | 2026-01-04 | 2026-01-04 |\n",
		"| 260105000000 | TODO | P2 | med | code |  |  | Second of two<br>also broken | 2026-01-05 | 2026-01-05 |\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("the matrix lacks the joined line\n%s\ngot\n%s", line, got)
		}
	}
	// What was not a continued row keeps its bytes.
	for _, keep := range []string{"# Inkwell matrix\n\nAgents: pick a TODO row.\n\n", "| 260101111619 | DONE | P1 | med | code | | @codex |Refactor window state| 2026-01-01 | 2026-01-02 16:02:43 |\n",
		"| 9c9c9c | TODO | P2 | med | code | | forgot a cell | 2026-01-06 | 2026-01-06 |\n", "\nProse after the table, kept.\n"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the matrix lost %q", keep)
		}
	}
	if b, a := ids(t, brokenMatrix), ids(t, got); !slices.Equal(a, b) {
		t.Errorf("IDs after the fix %v, want %v", a, b)
	}
	tables := gfmtable.Parse([]byte(got))
	if len(tables) != 1 || len(tables[0].Rows) != 8 {
		t.Errorf("GFM sees %d tables (%+v), want one with 8 rows", len(tables), tables)
	}
	// The 9-cell row is left, and said so, on its line in the fixed file.
	if len(rep.NotFixed) != 1 || rep.NotFixed[0].Line != 13 || !strings.HasPrefix(strings.Split(got, "\n")[12], "| 9c9c9c |") {
		t.Errorf("NotFixed = %+v, want the 9-cell row on line 13", rep.NotFixed)
	}
	if rep.Errors() == 0 || rep.Canonicalized != -1 || len(rep.Files) != 1 || rep.Files[0].Path != ".agent/DEVELOPMENT_MATRIX.md" {
		t.Errorf("errors %d, canonicalized %d, files %+v", rep.Errors(), rep.Canonicalized, rep.Files)
	}
	for _, d := range rep.Remaining {
		if strings.Contains(d.Message, "goes on over") {
			t.Errorf("a continued row is left: %s", d)
		}
	}
}

func TestRunNothingToFixChangesNothing(t *testing.T) {
	src := "| ID | Status | Description |\n|--|--|--|\n|  a1b2c3 | TODO |  tidy up  |\n"
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src})
	check := treehash.Guard(t, ws.Root)
	rep, err := Run(context.Background(), ws, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	check()
	if rep.Changed() || rep.Summary() != "nothing to fix: no row goes on over several lines; no file changed" {
		t.Errorf("changed %v, summary %q", rep.Changed(), rep.Summary())
	}
}

// A dry run writes nothing, and what it shows is what the fix then writes.
func TestRunDryRunShowsWhatRunWrites(t *testing.T) {
	for _, mode := range []Mode{Join, Move} {
		t.Run(string(mode), func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{
				".agent/DEVELOPMENT_MATRIX.md":                          brokenMatrix,
				".agent/tasks/260103114541_note_editor_tests/README.md": "# Note editor tests\n\nNotes of our own.\n",
			})
			check := treehash.Guard(t, ws.Root)
			dry, err := Run(context.Background(), ws, Options{Mode: mode, DryRun: true, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			check()
			if !dry.Changed() || !strings.Contains(dry.Summary(), "would fix 5 rows") {
				t.Fatalf("dry run: %s", dry.Summary())
			}
			for _, f := range dry.Files {
				if !strings.HasPrefix(f.Diff, "--- a/"+f.Path+"\n+++ b/"+f.Path+"\n@@") {
					t.Errorf("diff of %s:\n%s", f.Path, f.Diff)
				}
			}
			rep, err := Run(context.Background(), ws, Options{Mode: mode, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dry.Rows, rep.Rows) {
				t.Errorf("dry run said\n%s\nthe fix did\n%s", dry.Summary(), rep.Summary())
			}
			var paths []string
			for _, f := range dry.Files {
				paths = append(paths, f.Path)
				if got := readFile(t, ws, f.Path); got != f.after {
					t.Errorf("%s after the fix differs from the dry run's:\n%s\nwant\n%s", f.Path, got, f.after)
				}
			}
			want := []string{".agent/DEVELOPMENT_MATRIX.md"}
			if mode == Move {
				want = []string{".agent/tasks/260101184335_investigate_flaky_schema_it_fails_on_ci/README.md",
					".agent/tasks/260103114541_note_editor_tests/README.md", ".agent/DEVELOPMENT_MATRIX.md"}
			}
			if !slices.Equal(paths, want) {
				t.Errorf("dry run files %v, want %v", paths, want)
			}
		})
	}
}

func TestRunMove(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		".agent/DEVELOPMENT_MATRIX.md":                          brokenMatrix,
		".agent/tasks/260103114541_note_editor_tests/README.md": "# Note editor tests\n\nNotes of our own.",
	})
	rep, err := Run(context.Background(), ws, Options{Mode: Move, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := "fixed 5 rows: joined row at line 18 (lines 18-21; it has no ID, so no task folder: joined instead of moved), " +
		"260105000000 (lines 22-23; ID 260105000000 is on 2 rows, so no one task folder: joined instead of moved), " +
		"260105000000 (lines 24-25; ID 260105000000 is on 2 rows, so no one task folder: joined instead of moved); " +
		"moved 260101184335 (lines 8-11) to .agent/tasks/260101184335_investigate_flaky_schema_it_fails_on_ci/README.md, " +
		"260103114541 (lines 12-17) to .agent/tasks/260103114541_note_editor_tests/README.md"
	if got := rep.Summary(); got != want {
		t.Errorf("Summary()\n got %s\nwant %s", got, want)
	}
	m := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md")
	for _, line := range []string{
		"| 260101184335 | TODO | P1 | easy | code |  |  | Investigate flaky schema. | 2026-01-01 18:43:35 | 2026-01-04 |\n",
		"| 260103114541 | DONE | P2 | hard | code |  |  | Add tests for note editor | 2026-01-03 | 2026-01-05 |\n",
	} {
		if !strings.Contains(m, line) {
			t.Errorf("matrix lacks\n%s\ngot\n%s", line, m)
		}
	}
	wantReadme := "# Note editor tests\n\nNotes of our own.\n\n## Description\n\n" +
		"_Moved here from `.agent/DEVELOPMENT_MATRIX.md` (task 260103114541, lines 12-17) by `agentinfra validate --fix=move` on 2026-11-21; the row keeps its first sentence._\n\n" +
		"Add tests for note editor\nRepro:\n```bash\ncat notes.log | grep -c 'conflict'   # a | b\n```\n"
	if got := readFile(t, ws, ".agent/tasks/260103114541_note_editor_tests/README.md"); got != wantReadme {
		t.Errorf("existing README\n%s\nwant\n%s", got, wantReadme)
	}
	// The row without a folder got one from the task scaffold, with the text.
	scaffolded := readFile(t, ws, ".agent/tasks/260101184335_investigate_flaky_schema_it_fails_on_ci/README.md")
	if !strings.Contains(scaffolded, "Investigate flaky schema. It fails on CI only  \n1. reproduce with `cargo tauri dev`\n2. add a failing test") {
		t.Errorf("scaffolded README lacks the description:\n%s", scaffolded)
	}
	if _, err := os.Stat(filepath.Join(ws.TasksDir(), "260101184335_investigate_flaky_schema_it_fails_on_ci", "tracking")); err != nil {
		t.Errorf("not a scaffolded folder: %v", err)
	}
	// Run again: nothing left to move, nothing changes.
	check := treehash.Guard(t, ws.Root)
	again, err := Run(context.Background(), ws, Options{Mode: Move, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	check()
	if again.Changed() {
		t.Errorf("second run changed %+v", again.Files)
	}
}

// A README that cannot be written, or a matrix write that fails after the
// READMEs, never loses text: the matrix is unchanged.
func TestRunFailureKeepsTheMatrix(t *testing.T) {
	files := map[string]string{
		".agent/DEVELOPMENT_MATRIX.md":                          brokenMatrix,
		".agent/tasks/260103114541_note_editor_tests/README.md": "# Notes\n",
		".agent/tasks/260101184335_flaky/README.md":             "# Flaky\n",
	}
	boom := errors.New("disk full")
	files[".agent/.DEVELOPMENT_MATRIX.md.lock"] = "" // as any earlier write leaves it
	t.Run("README", func(t *testing.T) {
		ws := newWorkspace(t, files)
		writeFile = func(string, []byte) error { return boom }
		defer func() { writeFile = atomicfile.Write }()
		check := treehash.Guard(t, ws.Root)
		if _, err := Run(context.Background(), ws, Options{Mode: Move, Now: now}); !errors.Is(err, boom) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
		check()
	})
	t.Run("matrix", func(t *testing.T) {
		ws := newWorkspace(t, files)
		testHookAfterReadmes = func() error { return boom }
		defer func() { testHookAfterReadmes = nil }()
		if _, err := Run(context.Background(), ws, Options{Mode: Move, Now: now}); !errors.Is(err, boom) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
		if got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md"); got != brokenMatrix {
			t.Errorf("matrix changed:\n%s", got)
		}
		if got := readFile(t, ws, ".agent/tasks/260101184335_flaky/README.md"); !strings.Contains(got, "2. add a failing test") {
			t.Errorf("README lacks the moved text:\n%s", got)
		}
	})
}

func TestRunCanonicalizesWhenAsked(t *testing.T) {
	src := "| ID | Status | Pri | Diff | Description |\n|--|--|--|--|--|\n| a1 | todo | P2 | M | keep\n going |\n| b2 | DONE | P1 | medium | done |\n"
	config := "matrix:\n  aliases:\n    difficulty: { M: med, medium: med }\n"
	for _, canon := range []bool{false, true} {
		cfg := config
		if canon {
			cfg += "  canonicalize: true\n"
		}
		ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src, ".agent/config.yaml": cfg})
		rep, err := Run(context.Background(), ws, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md")
		want := "| ID | Status | Pri | Diff | Description |\n|--|--|--|--|--|\n| a1 | todo | P2 | M | keep<br>going |\n| b2 | DONE | P1 | medium | done |\n"
		wantSummary := "fixed 1 row: joined a1 (lines 3-4)"
		wantN := -1
		if canon {
			want = "| ID | Status | Pri | Diff | Description |\n|--|--|--|--|--|\n| a1 | TODO | P2 | med | keep<br>going |\n| b2 | DONE | P1 | med | done |\n"
			wantSummary += "; canonicalized 3 values"
			wantN = 3
		}
		if got != want || rep.Canonicalized != wantN || rep.Summary() != wantSummary {
			t.Errorf("canonicalize %v: %q (%d)\n%s\nwant %q\n%s", canon, rep.Summary(), rep.Canonicalized, got, wantSummary, want)
		}
	}
}

func TestRunKeepsCRLF(t *testing.T) {
	src := "| ID | Status | Description |\r\n|--|--|--|\r\n| a1 | TODO | first\r\n- second |\r\n| b2 | TODO | fine |\r\n"
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src})
	if _, err := Run(context.Background(), ws, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	want := "| ID | Status | Description |\r\n|--|--|--|\r\n| a1 | TODO | first<br>- second |\r\n| b2 | TODO | fine |\r\n"
	if got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md"); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// When the one-parse replacement refuses, rows are replaced one at a time,
// with the same result.
func TestRunOneRowAtATime(t *testing.T) {
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": brokenMatrix})
	if _, err := Run(context.Background(), ws, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	want := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md")
	replaceRows = func(*matrix.Doc, []matrix.RowEdit) error { return matrix.ErrRefused }
	defer func() { replaceRows = (*matrix.Doc).ReplaceRowsAt }()
	ws = newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": brokenMatrix})
	rep, err := Run(context.Background(), ws, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md"); got != want || len(rep.Rows) != 5 {
		t.Errorf("one at a time (%d rows):\n%s\nwant\n%s", len(rep.Rows), got, want)
	}
}

// A row whose ID cell goes on over lines is not joined (its ID would
// change); it is named on its line in the fixed file.
func TestRunLeavesBrokenValues(t *testing.T) {
	src := "| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | one\ntwo |\n| b2\nx | TODO | three |\n"
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src})
	rep, err := Run(context.Background(), ws, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := "| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | one<br>two |\n| b2\nx | TODO | three |\n"
	if got := readFile(t, ws, ".agent/DEVELOPMENT_MATRIX.md"); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	wantNF := []NotFixed{{ID: "b2\nx", Line: 4, Reason: "the row goes on over lines 4-5 and its ID cell goes on over several lines; that cell holds one value, not text, so --fix does not join it: write the value on the row's first line by hand"}}
	if !slices.EqualFunc(rep.NotFixed, wantNF, sameNotFixed) || rep.Errors() == 0 {
		t.Errorf("NotFixed = %+v, errors %d", rep.NotFixed, rep.Errors())
	}
}

func sameNotFixed(a, b NotFixed) bool {
	return a.ID == b.ID && a.Line == b.Line && a.Reason == b.Reason
}

// A dry run changes nothing, so it names lines of the file as it is: the
// diagnostics left and the rows not fixed are where the user finds them now,
// not where the fix would move them (issue 19).
func TestDryRunNamesLinesOfTheFileAsItIs(t *testing.T) {
	src := "| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | one\ntwo\nthree |\n| b2\nx | TODO | four |\n| c3 | WRONG | five |\n"
	ws := newWorkspace(t, map[string]string{".agent/DEVELOPMENT_MATRIX.md": src})
	rep, err := Run(context.Background(), ws, Options{Now: now, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	wantNF := []NotFixed{{ID: "b2\nx", Line: 6, Reason: "the row goes on over lines 6-7 and its ID cell goes on over several lines; that cell holds one value, not text, so --fix does not join it: write the value on the row's first line by hand"}}
	if !slices.EqualFunc(rep.NotFixed, wantNF, sameNotFixed) {
		t.Errorf("dry run NotFixed = %+v\nwant %+v", rep.NotFixed, wantNF)
	}
	var statusLine int
	for _, d := range rep.Remaining {
		if strings.Contains(d.Message, "WRONG") {
			statusLine = d.Line
		}
	}
	if statusLine != 8 {
		t.Errorf("dry run: the bad status is reported on line %d, want 8 (where it is in the file); remaining %v", statusLine, rep.Remaining)
	}
	// The same fix, made: the lines of the fixed file.
	rep, err = Run(context.Background(), ws, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.NotFixed) != 1 || rep.NotFixed[0].Line != 4 {
		t.Errorf("fix NotFixed = %+v, want line 4 of the fixed file", rep.NotFixed)
	}
	for _, d := range rep.Remaining {
		if strings.Contains(d.Message, "WRONG") && d.Line != 6 {
			t.Errorf("fix: the bad status on line %d, want 6", d.Line)
		}
	}
}
