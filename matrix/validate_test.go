package matrix

import (
	"strings"
	"testing"
)

// A file with no task table is an error (issue 19): a file that is no
// matrix, an older-format one, an emptied one. A task table with no rows is
// what init writes: fine.
func TestValidateRefusesNoTaskTable(t *testing.T) {
	for name, c := range map[string]struct{ src, msg string }{
		"not a matrix": {"# Notes\n\n| Term | Meaning |\n|---|---|\n| P1 | urgent |\n", "m.md:1:1: error: the matrix has no task table"},
		"older format": {"## P1\n\n| Item | Priority |\n|---|---|\n| Fix it | P1 |\n", "m.md:1:1: error: the matrix has no task table (a table whose header has ID and Status columns); it looks like the older format, 1 items"},
		"empty":        {"", "m.md:1:1: error: the matrix is empty, so it has no task table and no task: restore it (from git: git checkout -- m.md)"},
		"blank lines":  {"\n\n  \n", "the matrix is empty"},
		"prose only":   {"# Development Matrix\n\nNothing yet.\n", "the matrix has no task table"},
	} {
		got := Validate(Parse([]byte(c.src)), "m.md")
		if len(got) != 1 || got[0].Severity != SeverityError || !strings.Contains(got[0].String(), c.msg) {
			t.Errorf("%s: diagnostics = %v; want one error saying %q", name, got, c.msg)
		}
	}
	if got := Validate(Parse([]byte(CanonicalHeader)), "m.md"); len(got) != 0 {
		t.Fatalf("an empty task table is fine; got %v", got)
	}
}

func TestIsBatchFolder(t *testing.T) {
	rows := map[string]bool{"260116": true, "260120204151": true, "TASK-12": true, "bd_a1": true}
	hasRow := func(id string) bool { return rows[id] }
	for name, want := range map[string]bool{
		"260115_bug_fixes":          true,
		"2026-01-16_bug_fixes":      true,
		"20260116_release":          true,
		"260116_bug_fixes":          false, // a row has ID 260116: its folder
		"260120204151_fix-login":    false, // a timestamp ID, not a date: an orphan task folder
		"261301_x":                  false, // no month 13
		"260230_x":                  false, // no 30 February
		"a0ffff_orphan":             false,
		"260115":                    false, // no slug: not a folder name of either kind
		"TASK-12_refactor":          false,
		"2026-01-16":                false,
		"bd_a1_x":                   false,
		"2026-01-16_2026-01-17_gap": true,
	} {
		if got := IsBatchFolder(name, hasRow); got != want {
			t.Errorf("IsBatchFolder(%q) = %v, want %v", name, got, want)
		}
	}
	// A row whose ID has an '_' and starts with the date owns the folder.
	rows["260115_a"] = true
	if IsBatchFolder("260115_a_slug", hasRow) {
		t.Error("260115_a_slug belongs to row 260115_a")
	}
}

func TestNumTasksCountsTaskRows(t *testing.T) {
	src := "| ID | Status |\n|---|---|\n| a00001 | TODO |\n| a00002 | DONE |\n\n| Term | Meaning |\n|---|---|\n| P1 | urgent |\n"
	d := Parse([]byte(src))
	if got, want := d.NumTasks(), len(d.IDs()); got != want || got != 2 {
		t.Fatalf("NumTasks() = %d, len(IDs()) = %d; want 2 task rows", got, want)
	}
}

// A date in a form agentinfra reads but of a day that does not exist says
// so, instead of advising the form it is written in (issue 19).
func TestDateProblems(t *testing.T) {
	for v, want := range map[string]string{
		"260230":     "not a real day: read as YYMMDD it is 2026-02-30",
		"2026-02-30": "not a real day (2026-02-30)",
		"20260121":   "YYYYMMDD is not read; write it with dashes: 2026-01-21",
		"yesterday":  "not a date; write YYYY-MM-DD",
	} {
		if got := dateProblem(v); !strings.HasPrefix(got, want) {
			t.Errorf("dateProblem(%q) = %q, want %q...", v, got, want)
		}
	}
}
