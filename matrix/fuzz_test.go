package matrix

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/agenterr"
)

// FuzzParseWrite checks the writer's promises on any input: Parse never
// panics and gives the bytes back unchanged; a status change of the first
// editable task changes only that task's line and adds no error; adding a task
// adds exactly one line and no error.
//
//	go test ./matrix -run x -fuzz FuzzParseWrite -fuzztime 3m
func FuzzParseWrite(f *testing.F) {
	for _, file := range corpusFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	rows, _ := filepath.Glob(filepath.Join("testdata", "rows", "*.md"))
	// The real-world corpus: fences that close on a row's last line, <br>
	// and backticks in cells, duplicate IDs, tables without Agents.
	realworld, _ := filepath.Glob(filepath.Join("..", "testdata", "realworld", "*", ".agent", "DEVELOPMENT_MATRIX.md"))
	for _, file := range append(rows, realworld...) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("a|b\n-|-\n"))
	f.Add([]byte("ID|Status\n-|-\n000001|TODO"))
	f.Add([]byte("Description | ID | Status\n---|---|---\nx | 000001 | TODO\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		orig := append([]byte{}, src...)
		d := Parse(src)
		if !bytes.Equal(d.Bytes(), orig) {
			t.Fatalf("Parse(src).Bytes() differs from src")
		}
		errorsBefore := countErrors(d.Diagnostics())
		tasksBefore := len(d.Tasks())

		var target *row
		for _, r := range d.rows {
			if !r.bad {
				target = r
				break
			}
		}
		if target != nil {
			id, line := target.id, int(target.line)
			status := "DONE"
			if d.taskOf(target).Status == "DONE" {
				status = "TODO"
			}
			before := append([]byte{}, d.Bytes()...)
			after, err := d.UpdateTask(id, Update{Status: Str(status)}, goldenNow)
			if err != nil {
				t.Fatalf("status change of clean row %s on line %d: %v", id, line, err)
			}
			if after.Status != status {
				t.Fatalf("status is %q after the change, want %q", after.Status, status)
			}
			assertOneLineChangedF(t, before, d.Bytes(), line)
			re := Parse(d.Bytes())
			if n := countErrors(re.Diagnostics()); n > errorsBefore {
				t.Fatalf("the change added errors (%d → %d): %v", errorsBefore, n, re.Diagnostics())
			}
			if n := len(re.Tasks()); n != tasksBefore {
				t.Fatalf("the change made %d tasks %d", tasksBefore, n)
			}
		}

		// A continued row: a status change keeps every line outside the
		// row, adds no error and loses no task.
		d = Parse(append([]byte{}, orig...))
		for _, r := range d.rows {
			if r.endLine <= r.line || len(d.byID(r.id)) != 1 {
				continue
			}
			id, first, last := r.id, int(r.line), int(r.endLine)
			before := append([]byte{}, d.Bytes()...)
			errs, ntasks := countErrors(d.Diagnostics()), len(d.Tasks())
			after, err := d.UpdateTask(id, Update{Status: Str("REVIEW")}, goldenNow)
			if err != nil {
				if errors.Is(err, ErrRefused) && bytes.Equal(before, d.Bytes()) {
					break // refused as a whole: fine
				}
				t.Fatalf("status change of continued row %s (lines %d-%d): %v", id, first, last, err)
			}
			if after.Status != "REVIEW" || after.Line != first {
				t.Fatalf("continued row after the change: %+v", after)
			}
			// (The row's own lines may join when the continued cell is
			// the one that changes.)
			head, tail := before[:lineStart(before, first)], before[lineStart(before, last+1):]
			if !bytes.HasPrefix(d.Bytes(), head) || !bytes.HasSuffix(d.Bytes(), tail) || len(d.Bytes()) < len(head)+len(tail) {
				t.Fatalf("lines outside the row (%d-%d) changed:\n%q\n%q", first, last, before, d.Bytes())
			}
			if n := countErrors(d.Diagnostics()); n > errs || len(d.Tasks()) != ntasks {
				t.Fatalf("the change added errors (%d → %d) or lost tasks (%d → %d)", errs, n, ntasks, len(d.Tasks()))
			}
			break
		}
		d = Parse(append([]byte{}, orig...))

		if d.HasTaskTable() {
			errorsBefore = countErrors(d.Diagnostics())
			id := "f0220f"
			for len(d.byID(id)) > 0 {
				id = id[1:] + id[:1]
			}
			before := append([]byte{}, d.Bytes()...)
			tbl := d.tableFor("P2")
			added, err := d.CreateTask(Task{ID: id, Description: "fuzz | added\nrow"}, goldenNow)
			if _, ok := tbl.colIndex[ColDescription]; !ok {
				// Nowhere to keep the description: refused, not dropped.
				if !errors.Is(err, ErrInvalid) || !bytes.Equal(d.Bytes(), before) {
					t.Fatalf("add to a table without Description: %v", err)
				}
				return
			}
			if err != nil {
				// Refusing is right when the table ends in a row with errors:
				// a short row and the new one can read as one broken row.
				if errors.Is(err, ErrRefused) && len(tbl.rows) > 0 && tbl.rows[len(tbl.rows)-1].bad {
					if !bytes.Equal(d.Bytes(), before) {
						t.Fatalf("refused add changed the doc")
					}
					return
				}
				t.Fatalf("add: %v", err)
			}
			if got, want := bytes.Count(d.Bytes(), []byte{'\n'}), bytes.Count(before, []byte{'\n'})+1; got != want {
				t.Fatalf("add: %d line breaks, want %d", got, want)
			}
			if !bytes.HasPrefix(d.Bytes(), before[:lineStart(before, added.Line)]) {
				t.Fatalf("add changed the lines before line %d", added.Line)
			}
			re := Parse(d.Bytes())
			if n := countErrors(re.Diagnostics()); n > errorsBefore {
				t.Fatalf("the add added errors (%d → %d): %v\n%q", errorsBefore, n, re.Diagnostics(), d.Bytes())
			}
			got, ok := re.Task(id)
			if !ok {
				t.Fatalf("added task %s is not in the re-parsed file", id)
			}
			if got.Description != "fuzz | added\nrow" {
				t.Fatalf("added task reads back as %+v", got)
			}
		}
	})
}

// lineStart is the offset of line n (1-based) in src, or len(src).
func lineStart(src []byte, n int) int {
	off := 0
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src[off:], '\n')
		if j < 0 {
			return len(src)
		}
		off += j + 1
	}
	return off
}

// assertOneLineChangedF is assertOneLineChanged for any testing.TB.
func assertOneLineChangedF(t testing.TB, before, after []byte, n int) {
	t.Helper()
	b, a := splitLines(before), splitLines(after)
	if len(a) != len(b) {
		t.Fatalf("line count changed from %d to %d", len(b), len(a))
	}
	for i := range b {
		if (a[i] != b[i]) != (i == n-1) {
			t.Fatalf("line %d: changed=%v, want only line %d changed\nbefore: %q\nafter:  %q", i+1, a[i] != b[i], n, b[i], a[i])
		}
	}
	if !strings.HasSuffix(a[n-1], "\n") && strings.HasSuffix(b[n-1], "\n") {
		t.Fatalf("line %d lost its line ending", n)
	}
}

// FuzzWriteValue writes any string as a description, by update and by add,
// into each of the escapeTables: the row must stay one row with the right
// cells, no task may be lost, and the value must read back.
//
//	go test ./matrix -run x -fuzz FuzzWriteValue -fuzztime 1m
func FuzzWriteValue(f *testing.F) {
	for i, v := range nastyValues {
		f.Add(uint8(i), v)
	}
	names := make([]string, 0, len(escapeTables))
	for name := range escapeTables {
		names = append(names, name)
	}
	sort.Strings(names)
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		if !utf8.ValidString(v) {
			t.Skip("descriptions are text")
		}
		d := Parse([]byte(escapeTables[names[int(which)%len(names)]]))
		before := append([]byte{}, d.Bytes()...)
		if checkCellValue("description", v) != nil {
			// A control character or an oversized value is refused, and a
			// refused input changes nothing.
			if _, err := d.UpdateTask("0000a1", Update{Description: Str(v)}, goldenNow); agenterr.KindOf(err) != agenterr.Invalid {
				t.Fatalf("update of a refused value: err = %v, want an invalid value", err)
			}
			if !bytes.Equal(before, d.Bytes()) {
				t.Fatalf("a refused update changed the document")
			}
			return
		}
		if _, err := d.UpdateTask("0000a1", Update{Description: Str(v)}, goldenNow); err != nil {
			t.Fatalf("update: %v", err)
		}
		assertOneLineChangedF(t, before, d.Bytes(), 3)
		checkEscaped(t, d, "0000a1", v)
		if wantValue("x"+v) == "x" {
			return
		}
		if _, err := d.CreateTask(Task{ID: "0000b1", Description: "x" + v}, goldenNow); err != nil {
			t.Fatalf("add: %v", err)
		}
		checkEscaped(t, d, "0000b1", "x"+v)
	})
}
