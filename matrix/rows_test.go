package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readRows reads testdata/rows/NAME.
func readRows(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "rows", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// rowDiagnostics keeps the diagnostics about how rows read (this file's
// subject), leaving out those about values (IDs, dates, vocabulary).
func rowDiagnostics(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		for _, key := range []string{"goes on over", "cells but the table header", "never ends", "belong to no table", "belongs to no table"} {
			if strings.Contains(d.Message, key) {
				out = append(out, d.String())
				break
			}
		}
	}
	return out
}

var realIDs = []string{"260120204151", "260120204152", "260120204153", "260121101500", "260121101501",
	"260121101502", "260121101505", "260121101506"}

var realRowDiagnostics = []string{
	":9:1: error: task 260120204152 goes on over lines 8-12 (5 lines): a line break inside a cell; run `agentinfra validate --fix` to join it into one line",
	":15:1: error: task 260121101500 goes on over lines 14-17 (4 lines): a line break inside a cell; run `agentinfra validate --fix` to join it into one line",
	":19:1: error: task 260121101501 goes on over lines 18-25 (8 lines): a line break inside a cell; run `agentinfra validate --fix` to join it into one line",
	":27:1: error: task 260121101502 goes on over lines 26-31 (6 lines): a line break inside a cell; run `agentinfra validate --fix` to join it into one line",
	":32:1: error: row of task 260121101503 has 9 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column",
	":33:1: error: row of task 260121101504 has 11 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column",
	":35:1: error: task 260121101505 goes on over lines 34-35 (2 lines): a line break inside a cell; run `agentinfra validate --fix` to join it into one line",
	":40:1: warning: lines 40-41 look like table rows but belong to no table (no header and |---| row above them)",
}

func TestReadRealMatrix(t *testing.T) {
	lf := readRows(t, "real.md")
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	for name, src := range map[string][]byte{"LF": lf, "CRLF": crlf} {
		t.Run(name, func(t *testing.T) {
			d := Parse(src)
			if got := d.IDs(); !reflect.DeepEqual(got, realIDs) {
				t.Errorf("IDs = %v\nwant %v", got, realIDs)
			}
			byID := map[string]Task{}
			for _, tk := range d.Tasks() {
				byID[tk.ID] = tk
			}
			for _, c := range []struct {
				id               string
				line, endLine    int
				desc             string
				created, updated string
			}{
				{"260120204151", 7, 0, "Set up the repo and CI", "2026-01-20", "2026-01-21"},
				{"260120204152", 8, 12, "Rework the fetcher:\n1. Split the retry loop out of fetch.go\n2. Add jitter\n\nKeep the public API unchanged; see the design note.", "2026-01-23 14:18:12", "2026-01-24 09:00:00"},
				{"260120204153", 13, 0, "Short one", "2026-01-23", "2026-01-23"},
				{"260121101500", 14, 17, "Clean up logging:\n- drop the debug prints\n- use slog everywhere", "2026-01-21", "2026-01-22"},
				{"260121101501", 18, 25, "Document the CLI. Example:\n\n```bash\nagentinfra task list | grep TODO\necho \"a | b\"\n| x | y |\n```\nThen link it from the README.", "2026-01-21", "2026-01-25 14:15:22"},
				{"260121101502", 26, 31, "Plan the storage layer\n\n## Notes\n\nPostgres or SQLite? Decide after the spike.", "2026-01-21", "2026-01-21"},
				{"260121101505", 34, 35, "A description with a stray | pipe in the middle\nthat goes on over two lines", "2026-01-22", "2026-01-23"},
				{"260121101506", 36, 0, "Last good row", "2026-01-22", "2026-01-22"},
			} {
				tk := byID[c.id]
				if tk.Line != c.line || tk.EndLine != c.endLine || tk.Description != c.desc || tk.Created != c.created || tk.Updated != c.updated {
					t.Errorf("task %s = line %d-%d %q created %q updated %q\nwant line %d-%d %q created %q updated %q",
						c.id, tk.Line, tk.EndLine, tk.Description, tk.Created, tk.Updated, c.line, c.endLine, c.desc, c.created, c.updated)
				}
			}
			if tk := byID["260120204152"]; tk.Status != "IN_PROGRESS" || tk.Mode != "code" || !reflect.DeepEqual(tk.Skills, []string{"go-testing"}) || !reflect.DeepEqual(tk.Agents, []string{"@coder"}) {
				t.Errorf("cells before the continued one: %+v", tk)
			}
			if got := rowDiagnostics(d.Diagnostics()); !reflect.DeepEqual(got, realRowDiagnostics) {
				t.Errorf("diagnostics:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(realRowDiagnostics, "\n"))
			}
			var problems []string
			for _, p := range d.ReadProblems() {
				problems = append(problems, p.String())
			}
			if want := []string{realRowDiagnostics[4], realRowDiagnostics[5], realRowDiagnostics[7]}; !reflect.DeepEqual(problems, want) {
				t.Errorf("ReadProblems:\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestLookupUnreadableRow(t *testing.T) {
	src := readRows(t, "real.md")
	for _, c := range []struct{ id, mention string }{
		{"260121101503", "task 260121101503 is on line 32 of the matrix but could not be read: row of task 260121101503 has 9 cells but the table header has 10"},
		{"260121101504", "task 260121101504 is on line 33 of the matrix but could not be read: row of task 260121101504 has 11 cells"},
	} {
		_, err := Parse(src).Lookup(c.id)
		_, ferr := FindTask(src, c.id)
		for _, e := range []error{err, ferr} {
			if !errors.Is(e, ErrUnreadable) || errors.Is(e, ErrNotFound) || !strings.Contains(e.Error(), c.mention) {
				t.Errorf("lookup of %s: %v\nwant ErrUnreadable mentioning %q", c.id, e, c.mention)
			}
		}
	}
	if _, err := FindTask(src, "260121101599"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown ID: %v", err)
	}
}

// A row that never ends: at the end of the file, and before the next row.
func TestRowThatNeverEnds(t *testing.T) {
	const head = "# M\n\n| ID | Status | Description | Created | Updated |\n|----|--------|-------------|---------|---------|\n"
	t.Run("at the end of the file", func(t *testing.T) {
		src := head + "| 260120000001 | TODO | fine | 2026-01-20 | 2026-01-20 |\n" +
			"| 260120000002 | TODO | Starts here:\n\n- and goes on\n- without its dates\n\nuntil the end.\n"
		d := Parse([]byte(src))
		if got := d.IDs(); !reflect.DeepEqual(got, []string{"260120000001"}) {
			t.Errorf("IDs = %v", got)
		}
		want := []string{":6:1: error: row of task 260120000002 starting at line 6 never ends: no line before the end of the file ends it with its last cells (| Created | Updated |), so it is not read; end the row with those cells, or escape a | inside a cell as \\|"}
		if got := rowDiagnostics(d.ReadProblems()); !reflect.DeepEqual(got, want) {
			t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), want[0])
		}
		// create refuses: a new row would become part of the open one.
		s := writeMatrix(t, src)
		_, err := createVia(s, context.Background(), Task{Description: "new"}, goldenNow)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "line 6") || !strings.Contains(err.Error(), "agentinfra validate --fix") {
			t.Errorf("create after a row that never ends: %v", err)
		}
		assertUntouched(t, s, src)
		_, _, err = updateVia(s, context.Background(), "260120000002", Update{Status: Str("DONE")}, goldenNow)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "never ends") {
			t.Errorf("update of a row that never ends: %v", err)
		}
		assertUntouched(t, s, src)
	})
	t.Run("before the next row", func(t *testing.T) {
		src := head + "| 260120000002 | TODO | Starts here\nand goes on\n\n| 260120000003 | DONE | next | 2026-01-20 | 2026-01-21 |\n"
		d := Parse([]byte(src))
		if got := d.IDs(); !reflect.DeepEqual(got, []string{"260120000003"}) {
			t.Errorf("IDs = %v", got)
		}
		want := []string{":5:1: error: row of task 260120000002 starting at line 5 never ends: no line before line 8 ends it with its last cells (| Created | Updated |), so it is not read; end the row with those cells, or escape a | inside a cell as \\|"}
		if got := rowDiagnostics(d.ReadProblems()); !reflect.DeepEqual(got, want) {
			t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), want[0])
		}
		// The table's end is fine: create appends after the last row.
		if _, err := d.CreateTask(Task{ID: "0000aa", Description: "new"}, goldenNow); err != nil {
			t.Fatal(err)
		}
		if tk, _ := d.Task("0000aa"); tk.Line != 9 {
			t.Errorf("new row on line %d, want 9", tk.Line)
		}
	})
	t.Run("before a new table", func(t *testing.T) {
		src := head + "| 260120000002 | TODO | Starts here\n\n| ID | Status |\n|---|---|\n| 260120000004 | TODO |\n"
		d := Parse([]byte(src))
		if got := d.IDs(); !reflect.DeepEqual(got, []string{"260120000004"}) {
			t.Errorf("IDs = %v (the second table must be read)", got)
		}
		if got := rowDiagnostics(d.ReadProblems()); len(got) != 1 || !strings.Contains(got[0], "never ends: no line before line 7") {
			t.Errorf("problems: %v", got)
		}
	})
}

// A table inside a continued cell (in a fence, or as text) is part of the
// cell, not a table of its own.
func TestTableInsideContinuedCell(t *testing.T) {
	const src = "| ID | Status | Description | Created |\n|---|---|---|---|\n" +
		"| 0000a1 | TODO | Example of the format:\n\n```markdown\n| ID | Status | Description | Created |\n|---|---|---|---|\n| 0000ff | DONE | example | 2026-01-01 |\n```\n| 2026-01-01 |\n" +
		"| 0000a2 | DONE | after | 2026-01-02 |\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2"}) {
		t.Errorf("IDs = %v", got)
	}
	if tk, _ := d.Task("0000a1"); !strings.Contains(tk.Description, "| 0000ff | DONE | example | 2026-01-01 |") || tk.Created != "2026-01-01" || tk.EndLine != 10 {
		t.Errorf("continued row: %+v", tk)
	}
	if ps := d.ReadProblems(); len(ps) != 0 {
		t.Errorf("problems: %v", ps)
	}
}

// Rows after a continued row that goldmark puts into a list item (lazy
// continuation) are rows of the table.
func TestRowsAfterContinuedRowInList(t *testing.T) {
	const src = "| ID | Status | Description | Created |\n|---|---|---|---|\n" +
		"| 0000a1 | TODO | Steps:\n- one\n- two\n| 2026-01-01 |\n| 0000a2 | DONE | after | 2026-01-02 |\n| 0000a3 | TODO | and after | 2026-01-03 |\n\nText.\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2", "0000a3"}) {
		t.Errorf("IDs = %v", got)
	}
	if ps := d.ReadProblems(); len(ps) != 0 {
		t.Errorf("problems: %v", ps)
	}
	if tk, _ := d.Task("0000a3"); tk.Line != 8 || tk.Created != "2026-01-03" {
		t.Errorf("0000a3: %+v", tk)
	}
}

// Updating a continued row rewrites the cells it changes (Status on the first
// line, Updated on the last) and no other byte.
func TestUpdateContinuedRow(t *testing.T) {
	src := readRows(t, "real.md")
	s := writeMatrix(t, string(src))
	_, after, err := updateVia(s, context.Background(), "260121101501", Update{Status: Str("DONE")}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != "DONE" || after.Updated != "2026-07-01 12:00:00" || after.Line != 18 || after.EndLine != 25 || !strings.HasPrefix(after.Description, "Document the CLI. Example:\n\n```bash") {
		t.Errorf("after: %+v", after)
	}
	got, _ := os.ReadFile(s.Path)
	want := strings.Replace(string(src), "| 260121101501 | REVIEW |", "| 260121101501 | DONE |", 1)
	want = strings.Replace(want, "Then link it from the README. | 2026-01-21 | 2026-01-25 14:15:22 |", "Then link it from the README. | 2026-01-21 | 2026-07-01 12:00:00 |", 1) // the cell's style: date and time
	if string(got) != want {
		t.Errorf("file after the update differs beyond the two cells:\n%s", got)
	}

	// A new Description replaces the whole continued cell.
	_, after, err = updateVia(s, context.Background(), "260120204152", Update{Description: Str("Rework the fetcher (see tasks/)")}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(s.Path)
	d := Parse(got)
	if re, _ := d.Task("260120204152"); after.Description != "Rework the fetcher (see tasks/)" || re.Description != after.Description || re.Line != 8 || re.EndLine != 0 || re.Created != "2026-01-23 14:18:12" {
		t.Errorf("after a new description: returned %+v, re-read %+v", after, re)
	}
	if !reflect.DeepEqual(d.IDs(), realIDs) {
		t.Errorf("IDs after the update: %v", d.IDs())
	}
}

// create appends after the last line of the task table's last row, also
// when that row goes on over several lines.
func TestCreateAfterContinuedLastRow(t *testing.T) {
	src := readRows(t, "real.md")
	d := Parse(src)
	tk, err := d.CreateTask(Task{ID: "0000aa", Description: "new"}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Line != 37 {
		t.Errorf("new row on line %d, want 37 (after the last row)", tk.Line)
	}
	if want := string(src[:lineStart(src, 37)]); !strings.HasPrefix(string(d.Bytes()), want) || !strings.HasSuffix(string(d.Bytes()), string(src[lineStart(src, 37):])) {
		t.Errorf("create changed other lines:\n%s", d.Bytes())
	}

	const cont = "| ID | Status | Description | Created |\n|---|---|---|---|\n| 0000a1 | TODO | Steps:\n- one\n- two\n| 2026-01-01 |\n\nAfter the table.\n"
	d = Parse([]byte(cont))
	if _, err := d.CreateTask(Task{ID: "0000a2", Description: "new"}, goldenNow); err != nil {
		t.Fatal(err)
	}
	want := "| ID | Status | Description | Created |\n|---|---|---|---|\n| 0000a1 | TODO | Steps:\n- one\n- two\n| 2026-01-01 |\n| 0000a2 | TODO | new | 2026-07-01 |\n\nAfter the table.\n"
	if string(d.Bytes()) != want {
		t.Errorf("after create:\n%s\nwant\n%s", d.Bytes(), want)
	}
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2"}) {
		t.Errorf("IDs after create = %v", got)
	}
}

func TestContinuedRowsAndReplaceRow(t *testing.T) {
	src := readRows(t, "real.md")
	d := Parse(src)
	crs := d.ContinuedRows()
	var ids []string
	for _, cr := range crs {
		ids = append(ids, cr.ID)
	}
	if want := []string{"260120204152", "260121101500", "260121101501", "260121101502", "260121101505"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ContinuedRows IDs = %v, want %v", ids, want)
	}
	cr := crs[0]
	if cr.Line != 8 || cr.EndLine != 12 || len(cr.Columns) != 10 || cr.Columns[7] != "Description" || len(cr.Cells) != 10 ||
		cr.Cells[7] != "Rework the fetcher:\n1. Split the retry loop out of fetch.go\n2. Add jitter\n\nKeep the public API unchanged; see the design note." ||
		cr.Cells[8] != "2026-01-23 14:18:12" {
		t.Errorf("ContinuedRow = %+v", cr)
	}
	if raw := crs[4].Cells[7]; raw != "A description with a stray | pipe in the middle\nthat goes on over two lines" {
		t.Errorf("raw cell with a stray pipe: %q", raw)
	}

	// Refusals change nothing.
	bad := append([]string{}, cr.Cells...)
	for _, c := range []struct {
		cells   []string
		mention string
	}{
		{bad, "line break"},
		{append(append([]string{}, cr.Cells[:7]...), "a | b", "2026-01-23", "2026-01-24"), `unescaped |`},
		{cr.Cells[:9], "9 cells for a table of 10 columns"},
	} {
		before := append([]byte{}, d.Bytes()...)
		if err := d.ReplaceRow(cr.ID, c.cells); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("ReplaceRow: %v, want ErrInvalid mentioning %q", err, c.mention)
		}
		if !bytes.Equal(before, d.Bytes()) {
			t.Errorf("a refused ReplaceRow changed the doc")
		}
	}
	if err := d.ReplaceRow("260121101503", cr.Cells); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("ReplaceRow of an unreadable row: %v", err)
	}

	joined := append([]string{}, cr.Cells...)
	joined[7] = strings.ReplaceAll(joined[7], "\n", "<br>")
	if err := d.ReplaceRow(cr.ID, joined); err != nil {
		t.Fatal(err)
	}
	wantLine := "| 260120204152 | IN_PROGRESS | P1 | hard | code | go-testing | @coder | Rework the fetcher:<br>1. Split the retry loop out of fetch.go<br>2. Add jitter<br><br>Keep the public API unchanged; see the design note. | 2026-01-23 14:18:12 | 2026-01-24 09:00:00 |\n"
	want := string(src[:lineStart(src, 8)]) + wantLine + string(src[lineStart(src, 13):])
	if string(d.Bytes()) != want {
		t.Errorf("after ReplaceRow:\n%s", d.Bytes())
	}
	if got := d.IDs(); !reflect.DeepEqual(got, realIDs) {
		t.Errorf("IDs after ReplaceRow = %v", got)
	}
	if tk, _ := d.Task(cr.ID); tk.Line != 8 || tk.EndLine != 0 || len(d.ContinuedRows()) != 4 {
		t.Errorf("replaced row reads back as %+v, %d continued rows left", tk, len(d.ContinuedRows()))
	}

	// CRLF: the row keeps the file's line ending.
	crlf := []byte("| ID | Status | Description |\r\n|---|---|---|\r\n| 0000a1 | TODO | one\r\ntwo |\r\n| 0000a2 | DONE | x |\r\n")
	d = Parse(crlf)
	if crs := d.ContinuedRows(); len(crs) != 1 || crs[0].Cells[2] != "one\r\ntwo" {
		t.Fatalf("CRLF continued rows: %+v", crs)
	}
	if err := d.ReplaceRow("0000a1", []string{"0000a1", "TODO", "one<br>two"}); err != nil {
		t.Fatal(err)
	}
	if want := "| ID | Status | Description |\r\n|---|---|---|\r\n| 0000a1 | TODO | one<br>two |\r\n| 0000a2 | DONE | x |\r\n"; string(d.Bytes()) != want {
		t.Errorf("CRLF after ReplaceRow: %q", d.Bytes())
	}
}

// Stray `|`-led lines: reported with their range, also in lists; not when a
// continued row took them in, nor in code.
func TestStrayPipeLines(t *testing.T) {
	const src = "# M\n\n| ID | Status |\n|---|---|\n| 0000a1 | TODO |\n\n| 0000a2 | TODO |\n| 0000a3 | DONE |\n\n- item\n  | 0000a4 | TODO |\n\n```\n| not | a row |\n```\n\n| lone |\n"
	d := Parse([]byte(src))
	want := []string{
		":7:1: warning: lines 7-8 look like table rows but belong to no table (no header and |---| row above them)",
		":11:1: warning: line 11 looks like a table row but belongs to no table (no header and |---| row above it)",
		":17:1: warning: line 17 looks like a table row but belongs to no table (no header and |---| row above it)",
	}
	var got []string
	for _, p := range d.ReadProblems() {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Tables without outer pipes: a continued row ends at the line that holds
// its last cells, also when more rows follow.
func TestContinuedRowWithoutOuterPipes(t *testing.T) {
	const src = "ID | Status | Description | Created\n---|---|---|---\n0000a1 | TODO | starts | 2026-01-01\n0000a2 | TODO | goes\non here | 2026-01-02\n0000a3 | DONE | last | 2026-01-03\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2", "0000a3"}) {
		t.Errorf("IDs = %v", got)
	}
	if tk, _ := d.Task("0000a2"); tk.Description != "goes\non here" || tk.Created != "2026-01-02" || tk.EndLine != 5 {
		t.Errorf("continued row: %+v", tk)
	}
	if ps := d.ReadProblems(); len(ps) != 0 {
		t.Errorf("problems: %v", ps)
	}
}

// A free-text column after the Description may go on over several lines
// itself; only a shifted date or enum cell is taken for a stray pipe.
func TestContinuedExtraColumn(t *testing.T) {
	const src = "| ID | Status | Description | Notes | Created |\n|---|---|---|---|---|\n| 0000a1 | TODO | short | notes that\ngo on | 2026-01-01 |\n"
	tk, ok := Parse([]byte(src)).Task("0000a1")
	if !ok || tk.Description != "short" || tk.Extra["Notes"] != "notes that\ngo on" || tk.Created != "2026-01-01" {
		t.Errorf("task: %+v", tk)
	}
}

// bigRealShaped writes a matrix of n rows the way a busy project keeps one:
// 12-digit IDs, every third row going on over several lines (a numbered list,
// a bullet list, a fence, a heading), uneven padding. It returns the file and
// each row's Description.
func bigRealShaped(n int) ([]byte, []string, []string) {
	var b strings.Builder
	b.WriteString("# Matrix\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n|---|---|---|---|---|---|---|---|---|---|\n")
	statuses := []string{"TODO", "IN_PROGRESS", "DONE", "BLOCKED", "REVIEW"}
	var ids, descs []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("2601%02d%02d%02d%02d", 10+i/10000%20, i/100%24, i/10%60, i%60)
		desc := fmt.Sprintf("Task %d: keep the fetcher honest", i)
		switch i % 12 {
		case 1:
			desc += ":\n1. first step\n2. second step\n\nThen a paragraph."
		case 4:
			desc += "\n- a bullet\n- another bullet"
		case 7:
			desc += ". Example:\n\n```bash\nagentinfra task list | grep TODO\n| x | y |\n```\nDone."
		case 10:
			desc += "\n\n## Notes\n\nA heading inside the cell."
		}
		ids, descs = append(ids, id), append(descs, desc)
		fmt.Fprintf(&b, "| %s |%s| P%d | med | code | - | - | %s", id, statuses[i%5], 1+i%4, desc)
		if strings.Contains(desc, "\n") && i%2 == 0 {
			b.WriteString("\n| 2026-01-20 | 2026-01-23 14:15:22 |\n")
		} else {
			b.WriteString(" | 2026-01-20 |   2026-01-23 |\n")
		}
	}
	b.WriteString("\n## After the table\n\nProse.\n")
	return []byte(b.String()), ids, descs
}

func TestBigRealShapedMatrix(t *testing.T) {
	src, ids, descs := bigRealShaped(600)
	if len(src) < collapseMinBytes {
		t.Fatalf("the fixture (%d bytes) must be large enough for collapse", len(src))
	}
	d := Parse(src)
	if got := d.IDs(); !reflect.DeepEqual(got, ids) {
		t.Fatalf("read %d IDs, want %d", len(got), len(ids))
	}
	continued := 0
	for i, tk := range d.Tasks() {
		if tk.Description != descs[i] {
			t.Fatalf("task %s: description %q, want %q", tk.ID, tk.Description, descs[i])
		}
		if tk.EndLine > 0 {
			continued++
		}
	}
	if continued != 200 || len(d.ContinuedRows()) != 200 || len(d.ReadProblems()) != 0 {
		t.Errorf("%d continued rows (%d by ContinuedRows), problems %v; want 200 and none", continued, len(d.ContinuedRows()), d.ReadProblems())
	}
	parseBothWays(t, src)
	for _, q := range []Query{{Status: []string{"TODO"}}, {ID: ids[400]}, {Text: "heading"}, {Priority: []string{"P3"}, Sort: "priority"}} {
		if got, want := q.Select(src), q.Apply(d.Tasks()); !reflect.DeepEqual(got, want) {
			t.Errorf("Select(%+v) differs from Apply: %d vs %d tasks", q, len(got), len(want))
		}
	}
	// create appends after the last line of the last row.
	if _, err := d.CreateTask(Task{ID: "0000aa", Description: "new"}, goldenNow); err != nil {
		t.Fatal(err)
	}
	if got := d.IDs(); len(got) != 601 || got[600] != "0000aa" {
		t.Errorf("after create: %d IDs, last %s", len(got), got[len(got)-1])
	}
}

// A table written inside a continued cell without a fence: goldmark sees a
// table there, but its lines are part of the cell.
func TestUnfencedTableInsideContinuedCell(t *testing.T) {
	const src = "| ID | Status | Description | Created |\n|---|---|---|---|\n" +
		"| 0000a1 | TODO | Compare:\n\nA | B\n--|--\nx | y\n\n| 2026-01-01 |\n| 0000a2 | DONE | after | 2026-01-02 |\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2"}) {
		t.Errorf("IDs = %v", got)
	}
	if tk, _ := d.Task("0000a1"); tk.Description != "Compare:\n\nA | B\n--|--\nx | y" || tk.EndLine != 9 {
		t.Errorf("continued row: %+v", tk)
	}
	if len(d.tables) != 1 || len(d.ReadProblems()) != 0 {
		t.Errorf("%d tables, problems %v; want 1 table and none", len(d.tables), d.ReadProblems())
	}
}

// A row whose last cell is the Description goes on over blank lines when a
// later line ends it with `|`; otherwise a blank line ends it, as in GFM.
func TestLastCellOverBlankLines(t *testing.T) {
	const src = "| ID | Status | Description |\n|---|---|---|\n" +
		"| 0000a1 | TODO | Steps:\n\n1. one\n2. two\n\n```\n| not | a row |\n```\nDone. |\n" +
		"| 0000a2 | DONE | complete, no closing pipe\n\nProse after the table.\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"0000a1", "0000a2"}) {
		t.Errorf("IDs = %v", got)
	}
	if tk, _ := d.Task("0000a1"); tk.Description != "Steps:\n\n1. one\n2. two\n\n```\n| not | a row |\n```\nDone." || tk.EndLine != 11 {
		t.Errorf("continued last cell: %+v", tk)
	}
	if tk, _ := d.Task("0000a2"); tk.Description != "complete, no closing pipe" || tk.EndLine != 0 {
		t.Errorf("row before a blank line: %+v", tk)
	}
	if ps := d.ReadProblems(); len(ps) != 0 {
		t.Errorf("problems: %v", ps)
	}
}

// ReplaceRowAt reaches the rows ReplaceRow cannot name: a duplicated ID.
func TestReplaceRowAt(t *testing.T) {
	const src = "| ID | Status | Description |\n|---|---|---|\n| 0000a1 | TODO | one\ntwo |\n| 0000a1 | DONE | x |\n"
	d := Parse([]byte(src))
	cells := []string{"0000a1", "TODO", "one<br>two"}
	if err := d.ReplaceRow("0000a1", cells); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "lines 3, 5") {
		t.Errorf("ReplaceRow of a duplicated ID: %v", err)
	}
	if err := d.ReplaceRowAt(4, cells); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReplaceRowAt of a continuation line: %v", err)
	}
	if err := d.ReplaceRowAt(3, cells); err != nil {
		t.Fatal(err)
	}
	if want := "| ID | Status | Description |\n|---|---|---|\n| 0000a1 | TODO | one<br>two |\n| 0000a1 | DONE | x |\n"; string(d.Bytes()) != want {
		t.Errorf("after ReplaceRowAt:\n%s", d.Bytes())
	}
}

// People end a Description's code block and the row on one line:
// "```  | 2026-01-21 | 2026-01-21 |". CommonMark keeps such a fence open, but
// the row ends there, and every row after it is read (issue 19).
func TestFenceClosedOnTheRowsLastLine(t *testing.T) {
	const head = "| ID | Status | Pri | Description | Created | Updated |\n|----|--------|-----|-------------|---------|---------|\n"
	for name, c := range map[string]struct {
		row  string
		desc string
	}{
		"fewer cells": {
			"| 260121185712 | TODO | P2 | Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || '';\n```  | 2026-01-21 | 2026-01-21 |\n",
			"Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || '';\n```",
		},
		"tilde fence, no space": {
			"| 260121185712 | TODO | P2 | Run:\n~~~sh\nmake | tee log\n~~~| 2026-01-21 | 2026-01-21 |\n",
			"Run:\n~~~sh\nmake | tee log\n~~~",
		},
	} {
		t.Run(name, func(t *testing.T) {
			src := head + "| 260121185711 | TODO | P1 | First. | 2026-01-21 | 2026-01-21 |\n" + c.row +
				"| 260121185713 | IN_PROGRESS | P1 | Third. | 2026-01-21 | 2026-01-22 |\n"
			d := Parse([]byte(src))
			if got, want := d.IDs(), []string{"260121185711", "260121185712", "260121185713"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("IDs = %v, want %v; problems %v", got, want, d.ReadProblems())
			}
			tk, _ := d.Task("260121185712")
			if tk.Description != c.desc || tk.Created != "2026-01-21" || tk.Updated != "2026-01-21" {
				t.Errorf("the row: %q created %q updated %q", tk.Description, tk.Created, tk.Updated)
			}
			if last, _ := d.Task("260121185713"); last.Updated != "2026-01-22" || last.Status != "IN_PROGRESS" {
				t.Errorf("the row after it: %+v", last)
			}
			if ps := d.ReadProblems(); len(ps) != 0 {
				t.Errorf("read problems: %v", ps)
			}
		})
	}
	// A last cell that goes on (no closing pipe on the first line) closes the
	// same way.
	src := "| ID | Status | Description |\n|---|---|---|\n| a1 | TODO | Run:\n```sh\nls\n``` |\n| a2 | DONE | next |\n"
	d := Parse([]byte(src))
	if got := d.IDs(); !reflect.DeepEqual(got, []string{"a1", "a2"}) {
		t.Fatalf("IDs = %v", got)
	}
	if tk, _ := d.Task("a1"); tk.Description != "Run:\n```sh\nls\n```" {
		t.Errorf("a1 description %q", tk.Description)
	}
}

// A code block that never closes would take every row after it: the cell is
// read as text instead, and the message points at the line that opened it.
func TestUnclosedFenceInCell(t *testing.T) {
	const head = "| ID | Status | Description | Created | Updated |\n|----|--------|-------------|---------|---------|\n"
	t.Run("the row never ends", func(t *testing.T) {
		src := head + "| 260120000001 | TODO | Fix it:\n\n```go\nx := 1\n\n| 260120000002 | DONE | next | 2026-01-20 | 2026-01-21 |\n| 260120000003 | TODO | last | 2026-01-20 | 2026-01-21 |\n"
		d := Parse([]byte(src))
		if got := d.IDs(); !reflect.DeepEqual(got, []string{"260120000002", "260120000003"}) {
			t.Errorf("IDs = %v", got)
		}
		want := []string{":5:1: error: row of task 260120000001 starting at line 3 never ends: the code block opened on line 5 never closes (its closing fence must start a line), and no line before line 8 ends the row with its last cells (| Created | Updated |), so it is not read; close the code block, then end the row with those cells"}
		if got := rowDiagnostics(d.ReadProblems()); !reflect.DeepEqual(got, want) {
			t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), want[0])
		}
	})
	t.Run("the row ends as text", func(t *testing.T) {
		src := head + "| 260120000001 | TODO | Fix it:\n```go\nx := 1 | 2026-01-20 | 2026-01-21 |\n| 260120000002 | DONE | next | 2026-01-20 | 2026-01-21 |\n"
		d := Parse([]byte(src))
		if got := d.IDs(); !reflect.DeepEqual(got, []string{"260120000001", "260120000002"}) {
			t.Errorf("IDs = %v", got)
		}
		if got := rowDiagnostics(d.Diagnostics()); len(got) != 1 || !strings.Contains(got[0], "its code block opened on line 4 never closes") {
			t.Errorf("diagnostics: %v", got)
		}
	})
}

// The ID of a row that another row took in is not "no task": the lookup
// says where it is and which row took it (issue 19).
func TestLookupOfARowTakenIn(t *testing.T) {
	src := "| ID | Status | Description | Created |\n|---|---|---|---|\n" +
		"| 0000a1 | TODO | Example:\n```\n| 0000b2 | TODO | inside | 2026-01-01 |\n```\n| 2026-01-01 |\n" +
		"| 0000c3 | TODO | Never ends\n```\n| 0000d4 | TODO | in it | 2026-01-01 |\n"
	d := Parse([]byte(src))
	_, err := d.Lookup("0000b2")
	if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "task 0000b2 is on line 5 of the matrix, inside the Description of the row of task 0000a1 (lines 3-7)") {
		t.Errorf("lookup of a row inside a Description: %v", err)
	}
	if _, err := FindTask([]byte(src), "0000b2"); !errors.Is(err, ErrUnreadable) {
		t.Errorf("FindTask: %v", err)
	}
}
