package matrix

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gitLines is MergeOptions.Lines by `git merge-file`, as the CLI runs it.
func gitLines(t testing.TB) func(base, ours, theirs []byte) ([]byte, int, error) {
	return func(base, ours, theirs []byte) ([]byte, int, error) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
			return out, ee.ExitCode(), nil
		}
		return out, 0, err
	}
}

const mergeHeader = "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
	"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n"

// mrows is a matrix with prose around one task table of the given rows.
func mrows(rows ...string) string {
	return "# Matrix\n\nProse before.\n\n" + mergeHeader + strings.Join(rows, "\n") + "\n\n## Notes\n\nProse after.\n"
}

// row is a canonical row line.
func trow(id, status, skills, agents, desc, updated string) string {
	return "| " + id + " | " + status + " | P2 | med | coder | " + skills + " | " + agents + " | " + desc + " | 2026-01-01 | " + updated + " |"
}

func mustMerge(t *testing.T, base, ours, theirs string) MergeResult {
	t.Helper()
	res, err := Merge([]byte(base), []byte(ours), []byte(theirs), MergeOptions{Lines: gitLines(t)})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return res
}

func TestMergeByID(t *testing.T) {
	r1 := trow("T-1", "TODO", "go", "@ann", "one", "2026-01-01")
	r2 := trow("T-2", "TODO", "", "", "two", "2026-01-01")
	r3 := trow("T-3", "TODO", "", "", "three", "2026-01-01")
	cases := []struct {
		name               string
		base, ours, theirs string
		want               string
		conflicts          []MergeConflict
	}{{
		name: "new rows on both sides: ours first, then theirs",
		base: mrows(r1, r2), ours: mrows(r1, r2, trow("T-3", "TODO", "", "", "ours new", "2026-01-02")),
		theirs: mrows(r1, r2, trow("T-4", "TODO", "", "", "theirs new", "2026-01-02")),
		want:   mrows(r1, r2, trow("T-3", "TODO", "", "", "ours new", "2026-01-02"), trow("T-4", "TODO", "", "", "theirs new", "2026-01-02")),
	}, {
		name: "new rows after the same middle row",
		base: mrows(r1, r3), ours: mrows(r1, trow("O-1", "TODO", "", "", "o", "2026-01-02"), r3),
		theirs: mrows(r1, trow("X-1", "TODO", "", "", "t1", "2026-01-02"), trow("X-2", "TODO", "", "", "t2", "2026-01-02"), r3),
		want: mrows(r1, trow("O-1", "TODO", "", "", "o", "2026-01-02"), trow("X-1", "TODO", "", "", "t1", "2026-01-02"),
			trow("X-2", "TODO", "", "", "t2", "2026-01-02"), r3),
	}, {
		name: "different rows changed",
		base: mrows(r1, r2, r3), ours: mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2, r3),
		theirs: mrows(r1, r2, trow("T-3", "BLOCKED", "", "", "three", "2026-01-04")),
		want:   mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2, trow("T-3", "BLOCKED", "", "", "three", "2026-01-04")),
	}, {
		name: "same row, different cells; Updated takes the later date",
		base: mrows(r1, r2), ours: mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2),
		theirs: mrows(trow("T-1", "TODO", "go", "@ann", "one, reworded", "2026-01-07"), r2),
		want:   mrows(trow("T-1", "DONE", "go", "@ann", "one, reworded", "2026-01-07"), r2),
	}, {
		name: "same cell alike",
		base: mrows(r1, r2), ours: mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2),
		theirs: mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2, r3),
		want:   mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-05"), r2, r3),
	}, {
		name:   "set cells: both sides' additions, minus both sides' removals",
		base:   mrows(trow("T-1", "TODO", "go, sh", "@ann @bob", "one", "2026-01-01"), r2),
		ours:   mrows(trow("T-1", "TODO", "go, sh, rust", "@bob", "one", "2026-01-02"), r2),
		theirs: mrows(trow("T-1", "TODO", "go, py", "@bob @cy", "one", "2026-01-03"), r2),
		want:   mrows(trow("T-1", "TODO", "go, rust, py", "@bob @cy", "one", "2026-01-03"), r2),
	}, {
		name: "deleted on one side, unchanged on the other: deleted",
		base: mrows(r1, r2, r3), ours: mrows(r1, r3), theirs: mrows(r1, r2, trow("T-3", "DONE", "", "", "three", "2026-01-02")),
		want: mrows(r1, trow("T-3", "DONE", "", "", "three", "2026-01-02")),
	}, {
		name:   "the same cell two ways: a conflict of that row alone",
		base:   mrows(r1, r2, r3),
		ours:   mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-02"), trow("T-2", "TODO", "", "", "two (ours)", "2026-01-02"), r3),
		theirs: mrows(r1, trow("T-2", "BLOCKED", "", "", "two (theirs)", "2026-01-03"), trow("T-3", "DONE", "", "", "three", "2026-01-03")),
		want: mrows(trow("T-1", "DONE", "go", "@ann", "one", "2026-01-02"),
			"<<<<<<< ours\n"+trow("T-2", "BLOCKED", "", "", "two (ours)", "2026-01-03")+"\n=======\n"+trow("T-2", "BLOCKED", "", "", "two (theirs)", "2026-01-03")+"\n>>>>>>> theirs",
			trow("T-3", "DONE", "", "", "three", "2026-01-03")),
		conflicts: []MergeConflict{{Kind: ConflictCells, ID: "T-2", Line: 8, Cells: []CellConflict{{Column: "Description", Ours: "two (ours)", Theirs: "two (theirs)"}}}},
	}, {
		name: "deleted on one side, changed on the other: a conflict",
		base: mrows(r1, r2, r3), ours: mrows(r1, r3), theirs: mrows(r1, trow("T-2", "DONE", "", "", "two", "2026-01-02"), r3),
		want:      mrows(r1, "<<<<<<< ours\n=======\n"+trow("T-2", "DONE", "", "", "two", "2026-01-02")+"\n>>>>>>> theirs", r3),
		conflicts: []MergeConflict{{Kind: ConflictDeleted, ID: "T-2", Line: 8, DeletedBy: "ours"}},
	}, {
		name: "the same new ID on both sides, different rows: both kept, a conflict",
		base: mrows(r1), ours: mrows(r1, trow("T-2", "TODO", "", "", "login bug", "2026-01-02")),
		theirs: mrows(r1, trow("T-2", "TODO", "go", "", "docs", "2026-01-02")),
		want: mrows(r1, "<<<<<<< ours (T-2 added on both sides)\n"+trow("T-2", "TODO", "", "", "login bug", "2026-01-02")+
			"\n=======\n"+trow("T-2", "TODO", "go", "", "docs", "2026-01-02")+"\n>>>>>>> theirs"),
		conflicts: []MergeConflict{{Kind: ConflictAddedBoth, ID: "T-2", Line: 8}},
	}, {
		name: "the same new row on both sides (a cherry-pick): one row",
		base: mrows(r1), ours: mrows(r1, r2), theirs: mrows(r1, r2, r3),
		want: mrows(r1, r2, r3),
	}, {
		// Ours' new row stays after the row it follows on ours.
		name: "rows moved on one side only keep that side's order",
		base: mrows(r1, r2, r3), ours: mrows(r1, r2, r3, trow("T-4", "TODO", "", "", "four", "2026-01-02")),
		theirs: mrows(r3, r1, trow("T-2", "DONE", "", "", "two", "2026-01-02")),
		want:   mrows(r3, trow("T-4", "TODO", "", "", "four", "2026-01-02"), r1, trow("T-2", "DONE", "", "", "two", "2026-01-02")),
	}, {
		name: "prose edited on both sides, apart: merged as lines",
		base: mrows(r1), ours: strings.Replace(mrows(r1, r2), "Prose before.", "Prose before, edited.", 1),
		theirs: strings.Replace(mrows(r1, r3), "Prose after.", "Prose after, edited.", 1),
		want:   strings.Replace(strings.Replace(mrows(r1, r2, r3), "Prose before.", "Prose before, edited.", 1), "Prose after.", "Prose after, edited.", 1),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustMerge(t, c.base, c.ours, c.theirs)
			if string(res.Bytes) != c.want {
				t.Errorf("merged:\n%s\nwant:\n%s", res.Bytes, c.want)
			}
			if res.ByLines != "" {
				t.Errorf("merged by lines: %s", res.ByLines)
			}
			if got, want := conflictString(res.Conflicts), conflictString(c.conflicts); got != want {
				t.Errorf("conflicts %s, want %s", got, want)
			}
		})
	}
}

func conflictString(cs []MergeConflict) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Kind + " " + c.ID + " line " + strconv.Itoa(c.Line) + " by " + c.DeletedBy)
		for _, cc := range c.Cells {
			b.WriteString(" [" + cc.Column + ": " + cc.Ours + " | " + cc.Theirs + "]")
		}
		b.WriteString("; ")
	}
	return b.String()
}

// A column added on one side is added, with empty cells in the other
// side's rows written in each row's own padding; a renamed header keeps
// matching by its canonical name.
func TestMergeColumns(t *testing.T) {
	base := "| ID | Status | Description |\n|---|---|---|\n| a | TODO | one |\n|b|TODO|two|\n"
	ours := "| ID | Status | Description | Owner |\n|---|---|---|---|\n| a | TODO | one | ann |\n|b|TODO|two| |\n"
	theirs := "| ID | Status | Description |\n|---|---|---|\n| a | DONE | one |\n|b|TODO|two|\n|c|TODO|three|\n"
	res := mustMerge(t, base, ours, theirs)
	want := "| ID | Status | Description | Owner |\n|---|---|---|---|\n| a | DONE | one | ann |\n|b|TODO|two| |\n|c|TODO|three| |\n"
	if string(res.Bytes) != want || len(res.Conflicts) > 0 {
		t.Errorf("merged (%v):\n%s\nwant:\n%s", res.Conflicts, res.Bytes, want)
	}
	// The other way round: theirs adds the column, ours' new row gets it.
	res = mustMerge(t, base, theirs, ours)
	want = "| ID | Status | Description | Owner |\n|---|---|---|---|\n| a | DONE | one | ann |\n|b|TODO|two| |\n|c|TODO|three| |\n"
	if string(res.Bytes) != want || len(res.Conflicts) > 0 {
		t.Errorf("merged the other way (%v):\n%s\nwant:\n%s", res.Conflicts, res.Bytes, want)
	}
	// Priority is Pri.
	res = mustMerge(t, "| ID | Status | Pri |\n|---|---|---|\n| a | TODO | P2 |\n",
		"| ID | Status | Priority |\n|---|---|---|\n| a | TODO | P2 |\n",
		"| ID | Status | Pri |\n|---|---|---|\n| a | TODO | P1 |\n")
	if want := "| ID | Status | Priority |\n|---|---|---|\n| a | TODO | P1 |\n"; string(res.Bytes) != want {
		t.Errorf("renamed header:\n%s\nwant:\n%s", res.Bytes, want)
	}
}

// CRLF files stay CRLF, conflict markers included; a file without a final
// line ending keeps none; multi-line cells are merged as the text they are.
func TestMergeKeepsBytes(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	r1 := trow("T-1", "TODO", "", "", "one", "2026-01-01")
	r2 := trow("T-2", "TODO", "", "", "two", "2026-01-01")
	res := mustMerge(t, crlf(mrows(r1, r2)), crlf(mrows(r1, trow("T-2", "TODO", "", "", "two ours", "2026-01-01"))),
		crlf(mrows(r1, trow("T-2", "TODO", "", "", "two theirs", "2026-01-01"), trow("T-3", "TODO", "", "", "new", "2026-01-01"))))
	want := crlf(mrows(r1, "<<<<<<< ours\n"+trow("T-2", "TODO", "", "", "two ours", "2026-01-01")+"\n=======\n"+
		trow("T-2", "TODO", "", "", "two theirs", "2026-01-01")+"\n>>>>>>> theirs", trow("T-3", "TODO", "", "", "new", "2026-01-01")))
	if string(res.Bytes) != want {
		t.Errorf("CRLF:\n%q\nwant:\n%q", res.Bytes, want)
	}

	noEOL := func(s string) string { return mergeHeader + s }
	res = mustMerge(t, noEOL(r1), noEOL(trow("T-1", "DONE", "", "", "one", "2026-01-01")), noEOL(r1+"\n"+r2))
	if want := noEOL(trow("T-1", "DONE", "", "", "one", "2026-01-01") + "\n" + r2); string(res.Bytes) != want {
		t.Errorf("no final line ending:\n%q\nwant:\n%q", res.Bytes, want)
	}

	multi := "| T-1 | TODO | P2 | med | coder |  |  | one:\n- first\n- second | 2026-01-01 | 2026-01-01 |"
	multiTheirs := "| T-1 | TODO | P2 | med | coder |  |  | one:\n- first\n- second\n- third | 2026-01-01 | 2026-01-03 |"
	res = mustMerge(t, mrows(multi, r2), mrows(multi, trow("T-2", "DONE", "", "", "two", "2026-01-02")), mrows(multiTheirs, r2))
	if want := mrows(multiTheirs, trow("T-2", "DONE", "", "", "two", "2026-01-02")); string(res.Bytes) != want || len(res.Conflicts) > 0 {
		t.Errorf("multi-line cells (%v):\n%s\nwant:\n%s", res.Conflicts, res.Bytes, want)
	}
	// A multi-line cell changed on one side into a one-line row of the other.
	res = mustMerge(t, mrows(multi, r2), mrows(strings.Replace(multi, "| TODO |", "| DONE |", 1), r2), mrows(multiTheirs, r2))
	if want := mrows(strings.Replace(multiTheirs, "| TODO |", "| DONE |", 1), r2); string(res.Bytes) != want {
		t.Errorf("multi-line cells, both sides:\n%s\nwant:\n%s", res.Bytes, want)
	}
}

// Tables that cannot be matched, and a side with conflict markers, merge
// as lines and say why.
func TestMergeFallsBackToLines(t *testing.T) {
	r1 := trow("T-1", "TODO", "", "", "one", "2026-01-01")
	two := mrows(r1) + "\n" + mergeHeader + trow("T-9", "TODO", "", "", "nine", "2026-01-01") + "\n"
	res := mustMerge(t, mrows(r1), two, strings.Replace(mrows(r1), "Prose before.", "Prose before, edited.", 1))
	if res.ByLines == "" || len(res.Conflicts) > 0 || !bytes.Contains(res.Bytes, []byte("T-9")) || !bytes.Contains(res.Bytes, []byte("edited")) {
		t.Errorf("a table added: by lines %q, conflicts %v:\n%s", res.ByLines, res.Conflicts, res.Bytes)
	}
	if _, err := Merge([]byte(mrows(r1)), []byte(two), []byte(mrows(r1, r1)), MergeOptions{}); err == nil {
		t.Error("no line merge given: want an error for a file that must merge as lines")
	}
}

// Every conflict block of a merged file reads back as rows, and its
// diagnostics name the task, the cells and both values.
func TestConflictDiagnostics(t *testing.T) {
	r1 := trow("T-1", "TODO", "", "", "one", "2026-01-01")
	res := mustMerge(t, mrows(r1), mrows(trow("T-1", "DONE", "", "", "one ours", "2026-01-01"), trow("T-2", "TODO", "", "", "login", "2026-01-01")),
		mrows(trow("T-1", "BLOCKED", "", "", "one", "2026-01-01"), trow("T-2", "TODO", "", "", "docs", "2026-01-01")))
	cs := Conflicts(res.Bytes, nil)
	if len(cs) != 2 {
		t.Fatalf("%d conflicts in:\n%s", len(cs), res.Bytes)
	}
	ds := ConflictDiagnostics(cs)
	for i, want := range []string{
		`merge conflict in task T-1 (lines 7-11): both sides changed Status (ours "DONE", theirs "BLOCKED"); finish with ` + "`agentinfra validate --fix=ours T-1` or `agentinfra validate --fix=theirs T-1`",
		`task T-2 was added on both sides as two different tasks (ours: "login", theirs: "docs"); keep both with ` + "`agentinfra validate --fix=renumber`",
	} {
		if !strings.Contains(ds[i].Message, want) {
			t.Errorf("diagnostic %d: %s\nwant it to hold: %s", i, ds[i].Message, want)
		}
	}
	// The view for the other checks: ours, with lines mapped to the file's.
	view, line := ConflictView(res.Bytes)
	d := Parse(view)
	if got := d.IDs(); strings.Join(got, " ") != "T-1 T-2" {
		t.Errorf("ours' view holds %v", got)
	}
	for _, tk := range d.Tasks() {
		if want := map[string]int{"T-1": 8, "T-2": 13}[tk.ID]; line(tk.Line) != want {
			t.Errorf("%s on view line %d maps to %d, want %d", tk.ID, tk.Line, line(tk.Line), want)
		}
	}
	renumbered, err := cs[1].Renumbered("T-2", "T-3")
	if err != nil || renumbered != trow("T-2", "TODO", "", "", "login", "2026-01-01")+"\n"+trow("T-3", "TODO", "", "", "docs", "2026-01-01")+"\n" {
		t.Errorf("renumbered: %v %q", err, renumbered)
	}
}

// Deps is a set column too; a file with one task table per priority
// merges table by table; git's %L sets the markers' length; a conflict of
// the text around the tables is one of the merge's conflicts, with its line.
func TestMergeMoreShapes(t *testing.T) {
	deps := func(d string) string {
		return "| ID | Status | Deps |\n|---|---|---|\n| a | TODO | |\n| b | TODO | " + d + " |\n"
	}
	res := mustMerge(t, deps("a"), deps("a, c"), deps("d"))
	if want := deps("c, d"); string(res.Bytes) != want || len(res.Conflicts) > 0 {
		t.Errorf("Deps:\n%s\nwant:\n%s", res.Bytes, want)
	}

	twoTables := func(p1, p2 string) string {
		return "## P1\n\n" + mergeHeader + p1 + "\n\n## P2\n\n" + mergeHeader + p2 + "\n"
	}
	a, b := trow("A-1", "TODO", "", "", "one", "2026-01-01"), trow("B-1", "TODO", "", "", "two", "2026-01-01")
	a2, b2 := trow("A-2", "TODO", "", "", "ours", "2026-01-02"), trow("B-2", "TODO", "", "", "theirs", "2026-01-02")
	res = mustMerge(t, twoTables(a, b), twoTables(a+"\n"+a2, b), twoTables(a, b+"\n"+b2))
	if want := twoTables(a+"\n"+a2, b+"\n"+b2); string(res.Bytes) != want || len(res.Conflicts) > 0 {
		t.Errorf("two tables:\n%s\nwant:\n%s", res.Bytes, want)
	}

	r1 := trow("T-1", "TODO", "", "", "one", "2026-01-01")
	res, err := Merge([]byte(mrows(r1)), []byte(mrows(trow("T-1", "TODO", "", "", "ours", "2026-01-01"))),
		[]byte(mrows(trow("T-1", "TODO", "", "", "theirs", "2026-01-01"))), MergeOptions{MarkerSize: 9})
	if err != nil || !strings.Contains(string(res.Bytes), "\n<<<<<<<<< ours\n") || !strings.Contains(string(res.Bytes), "\n=========\n") ||
		!strings.Contains(string(res.Bytes), "\n>>>>>>>>> theirs\n") || len(Conflicts(res.Bytes, nil)) != 1 {
		t.Errorf("marker size 9: %v\n%s", err, res.Bytes)
	}

	prose := func(p, rows string) string { return "# Matrix\n\n" + p + "\n\n" + mergeHeader + rows + "\n" }
	res = mustMerge(t, prose("Prose.", r1), prose("Ours' prose.", r1+"\n"+b), prose("Theirs' prose.", r1+"\n"+b2))
	want := "# Matrix\n\n<<<<<<< ours\nOurs' prose.\n=======\nTheirs' prose.\n>>>>>>> theirs\n\n" + mergeHeader + r1 + "\n" + b + "\n" + b2 + "\n"
	if string(res.Bytes) != want || conflictString(res.Conflicts) != "lines  line 3 by ; " {
		t.Errorf("prose conflict (%s):\n%s\nwant:\n%s", conflictString(res.Conflicts), res.Bytes, want)
	}
	if ds := ConflictDiagnostics(Conflicts(res.Bytes, nil)); len(ds) != 1 || !strings.Contains(ds[0].Message, "merge conflict (lines 3-7) outside the task rows") {
		t.Errorf("diagnostics of the prose conflict: %v", ds)
	}
}
