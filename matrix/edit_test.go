package matrix

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Tables with the free-text Description column in every awkward place: with
// and without outer pipes, first, in the middle, last, in tight cells.
var escapeTables = map[string]string{
	"pipes": "| ID | Status | Description | Created | Updated |\n|----|--------|-------------|---------|---------|\n" +
		"| 0000a1 | TODO | old | 2026-01-01 | 2026-01-01 |\n| 0000a2 | DONE | other | 2026-01-01 | 2026-01-01 |\n",
	"tight":              "|ID|Status|Description|Updated|\n|-|-|-|-|\n|0000a1|TODO|old|2026-01-01|\n|0000a2|DONE|other|2026-01-01|\n",
	"nopipes-first":      "Description | ID | Status\n---|---|---\nold | 0000a1 | TODO\nother | 0000a2 | DONE\n",
	"nopipes-last":       "ID | Status | Description\n---|---|---\n0000a1 | TODO | old\n0000a2 | DONE | other\n",
	"crlf-nopipes-first": "Description | ID | Status\r\n---|---|---\r\nold | 0000a1 | TODO\r\nother | 0000a2 | DONE\r\n",
	"empty-description":  "| ID | Status | Description |\n|---|---|---|\n| 0000a1 | TODO | |\n| 0000a2 | DONE | |\n",
}

// Values that could split a row or a cell, or end the table, if written raw.
var nastyValues = []string{
	"a | b",
	"|",
	"||",
	`a \| b`,
	`\`,
	`trailing backslash \`,
	`\\`,
	"line\nbreak",
	"crlf\r\nbreak",
	"cr\rbreak",
	"\n",
	"  padded  ",
	"`code | with pipe`",
	"# looks like a heading",
	"- looks like a list",
	"* star list",
	"+ plus list",
	"1. ordered",
	"1) ordered",
	"> quote",
	"```",
	"~~~ fence",
	"<div>",
	"<!-- comment",
	"<script>",
	"---",
	"***",
	"=====",
	"|---|---|",
	"    indented",
	"\ttab",
	"日本語 🚀 | ✨",
	"",
}

// wantValue is what a value reads back as: trimmed, as a command takes it,
// then its lines as a cell keeps them (normalizedText).
func wantValue(v string) string { return normalizedText(strings.TrimSpace(v)) }

func TestWrittenValuesNeverSplitARow(t *testing.T) {
	for tname, src := range escapeTables {
		for _, v := range nastyValues {
			t.Run(tname+"/"+v, func(t *testing.T) {
				d := Parse([]byte(src))
				if len(d.Diagnostics()) != 0 || len(d.Tasks()) != 2 {
					t.Fatalf("bad fixture: %v", d.Diagnostics())
				}
				before := append([]byte{}, d.Bytes()...)
				line := d.Tasks()[0].Line
				if _, err := d.UpdateTask("0000a1", Update{Description: Str(v)}, goldenNow); err != nil {
					t.Fatalf("update: %v", err)
				}
				assertOneLineChanged(t, before, d.Bytes(), line)
				checkEscaped(t, d, "0000a1", v)

				before = append([]byte{}, d.Bytes()...)
				added, err := d.CreateTask(Task{ID: "0000b1", Description: "x" + v}, goldenNow)
				if err != nil {
					t.Fatalf("add: %v", err)
				}
				assertOneLineAdded(t, before, d.Bytes(), added.Line)
				checkEscaped(t, d, "0000b1", "x"+v)
			})
		}
	}
}

// checkEscaped re-parses d's bytes and checks that task id holds value v in a
// row with the right cell count, and that no other task was lost.
func checkEscaped(t testing.TB, d *Doc, id, v string) {
	t.Helper()
	re := Parse(d.Bytes())
	if diags := re.Diagnostics(); len(diags) != 0 {
		t.Fatalf("written file has diagnostics %v:\n%s", diags, d.Bytes())
	}
	if got, want := len(re.Tasks()), len(d.Tasks()); got != want || want < 2 {
		t.Fatalf("re-parse finds %d tasks, the doc says %d:\n%s", got, want, d.Bytes())
	}
	tk, ok := re.Task(id)
	if !ok {
		t.Fatalf("task %s is gone:\n%s", id, d.Bytes())
	}
	if decodable(v) && tk.Description != wantValue(v) {
		t.Errorf("description reads back as %q, want %q; line: %q", tk.Description, wantValue(v), lineOf(d.Bytes(), tk.Line))
	}
	for _, r := range re.rows {
		if len(r.cells()) != len(r.tbl.cols) {
			t.Errorf("line %d has %d cells, want %d", r.line, len(r.cells()), len(r.tbl.cols))
		}
	}
}

func TestUpdateEveryField(t *testing.T) {
	src := "| ID | Status | Priority | Difficulty | Mode | Skills | Agents | Description | Created | Updated | Owner |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|\n" +
		"| 0000c1 | TODO | P2 | med | | | @ann | Task | 2026-01-01 | 2026-01-01 | |\n"
	tests := []struct {
		name  string
		u     Update
		check func(Task) bool
	}{
		{"status alias", Update{Status: Str("in progress")}, func(t Task) bool { return t.Status == "IN_PROGRESS" }},
		{"priority digit", Update{Priority: Str("1")}, func(t Task) bool { return t.Priority == "P1" }},
		{"difficulty medium", Update{Difficulty: Str("Hard")}, func(t Task) bool { return t.Difficulty == "hard" }},
		{"mode into empty cell", Update{Mode: Str("coder")}, func(t Task) bool { return t.Mode == "coder" }},
		{"skills", Update{Skills: &[]string{"go-testing", " code-review "}}, func(t Task) bool { return strings.Join(t.Skills, ",") == "go-testing,code-review" }},
		{"agents added once", Update{AddAgents: []string{"bob", "@ann", "@bob"}}, func(t Task) bool { return strings.Join(t.Agents, " ") == "@ann @bob" }},
		{"extra column by name", Update{Set: map[string]string{"OWNER": "Zed | Z"}}, func(t Task) bool { return t.Extra["Owner"] == "Zed | Z" }},
		{"alias by Set", Update{Set: map[string]string{"priority": "p4", "Difficulty": "easy"}}, func(t Task) bool { return t.Priority == "P4" && t.Difficulty == "easy" }},
		{"explicit Updated wins", Update{Set: map[string]string{"Updated": "2026-06-30 09:15"}}, func(t Task) bool { return t.Updated == "2026-06-30 09:15" }},
		{"Updated set to today", Update{Status: Str("DONE")}, func(t Task) bool { return t.Updated == "2026-07-01" && t.Created == "2026-01-01" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Parse([]byte(src))
			after, err := d.UpdateTask("0000c1", tc.u, goldenNow)
			if err != nil {
				t.Fatal(err)
			}
			re, _ := Parse(d.Bytes()).Task("0000c1")
			if !tc.check(after) || !tc.check(re) {
				t.Errorf("returned %+v\nre-parsed %+v\nline %q", after, re, lineOf(d.Bytes(), 3))
			}
			assertOneLineChanged(t, []byte(src), d.Bytes(), 3)
			if diags := Parse(d.Bytes()).Diagnostics(); len(diags) != 0 {
				t.Errorf("diagnostics after update: %v", diags)
			}
		})
	}
}

// writeMatrix puts src into a fresh matrix file and returns its store.
func writeMatrix(t testing.TB, src string) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "DEVELOPMENT_MATRIX.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return NewStore(path)
}

// assertUntouched checks the matrix still holds src and no temp file was left.
func assertUntouched(t *testing.T, s *Store, src string) {
	t.Helper()
	got, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != src {
		t.Errorf("the matrix was changed:\n%s", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Path))
	for _, e := range entries {
		if e.Name() != filepath.Base(s.Path) && e.Name() != filepath.Base(s.LockPath()) {
			t.Errorf("stray file %s next to the matrix", e.Name())
		}
	}
}

func TestStoreRefusals(t *testing.T) {
	ctx := context.Background()
	const src = "# M\n\n| ID | Status | Pri | Diff | Description | Created |\n|---|---|---|---|---|---|\n" +
		"| 3fa9c1 | TODO | P1 | easy | Good row | 2026-01-01 |\n" +
		"| 3fa9c2 | PAUSED | P1 | easy | Row with an error | 2026-01-01 |\n" +
		"| 77aa00 | TODO | P2 | med | Another good row | 2026-01-01 |\n" +
		"| 3fa9c4 | TODO | P2 | med | A | stray pipe | 2026-01-01 |\n"
	tests := []struct {
		name    string
		op      func(s *Store) error
		is      error
		mention []string
	}{
		{"row that could not be read", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c4", Update{Status: Str("DONE")}, goldenNow)
			return err
		}, ErrRefused, []string{"3fa9c4", "line 8", "could not be read", "7 cells", "header has 6", `escape a | inside a cell as \|`}},
		{"unknown ID suggests close ones", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c3", Update{Status: Str("DONE")}, goldenNow)
			return err
		}, ErrNotFound, []string{`"3fa9c3"`, "did you mean 3fa9c1, 3fa9c2"}},
		{"unknown ID without close ones", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "000000", Update{Status: Str("DONE")}, goldenNow)
			return err
		}, ErrNotFound, []string{`no task "000000"`}},
		{"invalid status", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Status: Str("PAUSED")}, goldenNow)
			return err
		}, ErrInvalid, []string{`"PAUSED"`, "TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"}},
		{"invalid priority", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Priority: Str("P9")}, goldenNow)
			return err
		}, ErrInvalid, []string{"P1, P2, P3, P4"}},
		{"invalid difficulty", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Difficulty: Str("extreme")}, goldenNow)
			return err
		}, ErrInvalid, []string{"easy, med, hard"}},
		{"invalid date", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Set: map[string]string{"Created": "2026-02-30"}}, goldenNow)
			return err
		}, ErrInvalid, []string{"YYYY-MM-DD"}},
		{"unknown column", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Set: map[string]string{"Owner": "x"}}, goldenNow)
			return err
		}, ErrInvalid, []string{`"Owner"`, "ID, Status, Pri, Diff, Description, Created"}},
		{"ID cannot change", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{Set: map[string]string{"id": "123456"}}, goldenNow)
			return err
		}, ErrInvalid, []string{"ID column"}},
		{"bad mode", func(s *Store) error {
			_, err := createVia(s, ctx, Task{Mode: "../etc", Description: "x"}, goldenNow)
			return err
		}, ErrInvalid, []string{"mode"}},
		{"bad mention", func(s *Store) error {
			_, _, err := updateVia(s, ctx, "3fa9c1", Update{AddAgents: []string{"not a mention"}}, goldenNow)
			return err
		}, ErrInvalid, []string{"@mention"}},
		{"create with a used ID", func(s *Store) error {
			_, err := createVia(s, ctx, Task{ID: "77aa00", Description: "dup"}, goldenNow)
			return err
		}, ErrInvalid, []string{"77aa00", "line 7"}},
		{"create with a bad status", func(s *Store) error {
			_, err := createVia(s, ctx, Task{Status: "NOPE", Description: "x"}, goldenNow)
			return err
		}, ErrInvalid, []string{"TODO, IN_PROGRESS"}},
		{"create with a value the table has no column for", func(s *Store) error {
			_, err := createVia(s, ctx, Task{Description: "x", Agents: []string{"@ann"}, Extra: map[string]string{"Owner": "ann"}}, goldenNow)
			return err
		}, ErrInvalid, []string{`column "Agents"`, "no such column", "add it to the header"}},
		{"create without description", func(s *Store) error {
			_, err := createVia(s, ctx, Task{}, goldenNow)
			return err
		}, ErrInvalid, []string{"description"}},
		{"change that would add an error", func(s *Store) error {
			_, err := s.Modify(ctx, func(d *Doc) error {
				r := d.byID("3fa9c1")[0]
				d.splice(r.span.wide(), "| 3fa9c1 | TODO | P1 |") // too few cells
				return nil
			})
			return err
		}, ErrRefused, []string{"line 5", "cells", "nothing was written"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := writeMatrix(t, src)
			err := tc.op(s)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want errors.Is %v", err, tc.is)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			assertUntouched(t, s, src)
		})
	}

	t.Run("good row in a file with errors elsewhere", func(t *testing.T) {
		s := writeMatrix(t, src)
		before, after, err := updateVia(s, ctx, "77aa00", Update{Status: Str("DONE")}, goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		if before.Status != "TODO" || after.Status != "DONE" {
			t.Errorf("before %+v after %+v", before, after)
		}
		got, _ := os.ReadFile(s.Path)
		assertOneLineChanged(t, []byte(src), got, 7)
	})
}

func TestStoreCreateDefaults(t *testing.T) {
	s := writeMatrix(t, "# M\n\n"+CanonicalHeader+"\nAfter.\n")
	now := time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC)
	tk, err := createVia(s, context.Background(), Task{Description: "New", Agents: []string{"bob"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidID(tk.ID) || tk.Status != "TODO" || tk.Priority != "P2" || tk.Difficulty != "med" ||
		tk.Created != "2026-03-04" || tk.Updated != "2026-03-04" || strings.Join(tk.Agents, ",") != "@bob" || tk.Line != 5 {
		t.Errorf("created %+v", tk)
	}
	d, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := d.Task(tk.ID); !ok || got.Description != "New" {
		t.Errorf("task not in the file: %s", d.Bytes())
	}
	if !strings.HasSuffix(string(d.Bytes()), "\nAfter.\n") {
		t.Errorf("prose after the table changed:\n%s", d.Bytes())
	}
}

func TestCreateInFileWithoutTaskTable(t *testing.T) {
	const src = "# Notes\n\n| Name | Value |\n|---|---|\n| a | b |\n"
	s := writeMatrix(t, src)
	_, err := createVia(s, context.Background(), Task{Description: "x"}, goldenNow)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "| ID | Status |") {
		t.Fatalf("err = %v, want ErrRefused showing the header to add", err)
	}
	assertUntouched(t, s, src)
}

// fakeRand returns a randRead that yields the given 3-byte IDs in turn.
func fakeRand(t *testing.T, ids ...string) (restore func(), calls *int) {
	t.Helper()
	n := 0
	old := randRead
	randRead = func(b []byte) (int, error) {
		if n >= len(ids) {
			t.Fatalf("randRead called %d times, only %d IDs given", n+1, len(ids))
		}
		id := ids[n]
		n++
		for i := 0; i < 3; i++ {
			var v byte
			for _, c := range id[2*i : 2*i+2] {
				v = v*16 + byte(strings.IndexRune("0123456789abcdef", c))
			}
			b[i] = v
		}
		return len(b), nil
	}
	return func() { randRead = old }, &n
}

func TestNewIDCollisions(t *testing.T) {
	ctx := context.Background()
	const src = "| ID | Status | Description |\n|---|---|---|\n| aaaaaa | TODO | a |\n| bbbbbb | TODO | b |\n"

	t.Run("two collisions then success", func(t *testing.T) {
		restore, calls := fakeRand(t, "aaaaaa", "bbbbbb", "cccccc")
		defer restore()
		s := writeMatrix(t, src)
		tk, err := createVia(s, ctx, Task{Description: "c"}, goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		if tk.ID != "cccccc" || *calls != 3 {
			t.Errorf("ID %s after %d draws, want cccccc after 3", tk.ID, *calls)
		}
		d, _ := s.Load(ctx)
		if ids := strings.Join(d.IDs(), " "); ids != "aaaaaa bbbbbb cccccc" {
			t.Errorf("IDs in the file: %s", ids)
		}
	})

	t.Run("three collisions fail clearly", func(t *testing.T) {
		restore, calls := fakeRand(t, "aaaaaa", "bbbbbb", "aaaaaa")
		defer restore()
		s := writeMatrix(t, src)
		_, err := createVia(s, ctx, Task{Description: "c"}, goldenNow)
		if err == nil || !strings.Contains(err.Error(), "3 random task IDs in a row collided") || !strings.Contains(err.Error(), "try again") {
			t.Fatalf("err = %v, want a clear collision error", err)
		}
		if *calls != 3 {
			t.Errorf("%d draws, want 3", *calls)
		}
		assertUntouched(t, s, src)
	})

	t.Run("random source failure", func(t *testing.T) {
		old := randRead
		defer func() { randRead = old }()
		randRead = func([]byte) (int, error) { return 0, errors.New("entropy gone") }
		s := writeMatrix(t, src)
		if _, err := createVia(s, ctx, Task{Description: "c"}, goldenNow); err == nil || !strings.Contains(err.Error(), "entropy gone") {
			t.Fatalf("err = %v", err)
		}
		assertUntouched(t, s, src)
	})
}

func TestParseDiagnosticPositions(t *testing.T) {
	// Columns count runes, so a diagnostic after non-ASCII text points at the cell.
	src := "| Description | ID | Status |\n|---|---|---|\n| 日本語 | 0000d1 | NOPE |\n"
	diags := Parse([]byte(src)).Diagnostics()
	if len(diags) != 1 || diags[0].Line != 3 || diags[0].Col != 18 {
		t.Fatalf("diags = %v, want one at 3:18", diags)
	}
	if got := []rune(lineOf([]byte(src), 3))[diags[0].Col-1:]; !bytes.HasPrefix([]byte(string(got)), []byte("NOPE")) {
		t.Errorf("column points at %q", string(got))
	}
}

// A row that could not be read is no task, but its ID is taken: updating it
// is refused (not "not found"), and neither an explicit nor a random new ID
// may reuse it.
func TestUnreadableRowKeepsItsID(t *testing.T) {
	ctx := context.Background()
	const src = "| ID | Status | Description | Created |\n|---|---|---|---|\n| 0000f1 | TODO | split | here | 2026-01-01 |\n| 0000f2 | TODO | fine | |\n"
	if d := Parse([]byte(src)); len(d.Tasks()) != 1 || len(d.Diagnostics()) != 1 {
		t.Fatalf("fixture: %v %v", d.Tasks(), d.Diagnostics())
	}
	s := writeMatrix(t, src)
	_, _, err := updateVia(s, ctx, "0000f1", Update{Status: Str("DONE")}, goldenNow)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "line 3 could not be read") {
		t.Errorf("update of an unreadable row: %v, want ErrRefused naming line 3", err)
	}
	_, err = createVia(s, ctx, Task{ID: "0000f1", Description: "x"}, goldenNow)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already used on line 3") {
		t.Errorf("create with a broken row's ID: %v", err)
	}
	restore, calls := fakeRand(t, "0000f1", "0000f3")
	defer restore()
	tk, err := createVia(s, ctx, Task{Description: "x"}, goldenNow)
	if err != nil || tk.ID != "0000f3" || *calls != 2 {
		t.Errorf("random ID: %+v, %v after %d draws; want 0000f3 after 2", tk, err, *calls)
	}
}

// A row with errors can be changed when the change adds no error, so that
// the tool can repair what it reports.
func TestUpdateRowWithErrors(t *testing.T) {
	ctx := context.Background()
	const src = "| ID | Status | Pri | Diff | Description | Created |\n|---|---|---|---|---|---|\n" +
		"| 3fa9c2 | TODO | P1 | wild | Row with an error | 2026-13-01 |\n"
	s := writeMatrix(t, src)
	_, after, err := updateVia(s, ctx, "3fa9c2", Update{Status: Str("DONE")}, goldenNow)
	if err != nil || after.Status != "DONE" {
		t.Fatalf("status change of a row with errors: %+v, %v", after, err)
	}
	_, after, err = updateVia(s, ctx, "3fa9c2", Update{Difficulty: Str("hard")}, goldenNow)
	if err != nil || after.Difficulty != "hard" {
		t.Fatalf("repair of the difficulty: %+v, %v", after, err)
	}
	got, _ := os.ReadFile(s.Path)
	if want := "| 3fa9c2 | DONE | P1 | hard | Row with an error | 2026-13-01 |\n"; !strings.HasSuffix(string(got), want) {
		t.Errorf("row after the updates:\n%s\nwant it to end with\n%s", got, want)
	}
	if ds := Parse(got).Diagnostics(); len(ds) != 1 || !strings.Contains(ds[0].Message, "Created") {
		t.Errorf("diagnostics after the repair: %v, want only the bad Created", ds)
	}
}

func TestStoreKeepsModeAndSymlink(t *testing.T) {
	ctx := context.Background()
	const src = "| ID | Status | Description |\n|---|---|---|\n| 0000a9 | TODO | x |\n"

	t.Run("permissions", func(t *testing.T) {
		s := writeMatrix(t, src)
		if err := os.Chmod(s.Path, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := updateVia(s, ctx, "0000a9", Update{Status: Str("DONE")}, goldenNow); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode after the update: %v %v, want 0600", fi.Mode(), err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "shared", "matrix.md")
		link := filepath.Join(dir, "repo", "DEVELOPMENT_MATRIX.md")
		for _, p := range []string{target, link} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(target, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../shared/matrix.md", link); err != nil {
			t.Fatal(err)
		}
		s := NewStore(link)
		if _, _, err := updateVia(s, ctx, "0000a9", Update{Status: Str("DONE")}, goldenNow); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the matrix symlink was replaced by a file: %v %v", fi.Mode(), err)
		}
		got, _ := os.ReadFile(target)
		if tk, _ := Parse(got).Task("0000a9"); tk.Status != "DONE" {
			t.Errorf("the symlink's target was not updated:\n%s", got)
		}
	})
}

// With a column named twice, only the first is read and written, so what an
// update returns is what the file says.
func TestDuplicateColumnUpdateReadsBack(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "corpus", "invalid_duplicate_columns.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := Parse(src)
	after, err := d.UpdateTask("0d0d01", Update{Priority: Str("P3")}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	re, _ := Parse(d.Bytes()).Task("0d0d01")
	if after.Priority != "P3" || re.Priority != "P3" || re.Extra["Priority"] != "P2" {
		t.Errorf("returned %+v, re-parsed %+v", after, re)
	}
}

// The errors of Doc edits carry what adapters render: the field, the value
// and the valid ones, the close IDs; no message names a CLI flag.
func TestEditErrorsAreTyped(t *testing.T) {
	d := Parse([]byte("| ID | Status | Pri | Diff | Description | Created | Updated |\n|---|---|---|---|---|---|---|\n| 3fa9c1 | TODO | P1 | med | a | 2026-01-01 | 2026-01-01 |\n"))
	_, err := d.UpdateTask("3fa9c1", Update{Priority: Str("P9")}, goldenNow)
	var inv *agenterr.Error
	if !errors.As(err, &inv) || inv.Kind != agenterr.Invalid || inv.Field != "priority" || inv.Value != "P9" || !reflect.DeepEqual(inv.Valid, Priorities) {
		t.Errorf("bad priority: %#v", err)
	}
	_, err = d.UpdateTask("3fa9c1", Update{Set: map[string]string{"Owner": "x"}}, goldenNow)
	if !errors.As(err, &inv) || inv.Field != "column" || inv.Value != "Owner" || len(inv.Valid) != 7 {
		t.Errorf("unknown column: %#v", err)
	}
	_, err = d.UpdateTask("3fa9c2", Update{Status: Str("DONE")}, goldenNow)
	var nf *agenterr.Error
	if !errors.As(err, &nf) || nf.Kind != agenterr.NotFound || nf.What != "task" || nf.Field != "id" || nf.Value != "3fa9c2" || !reflect.DeepEqual(nf.Suggestions, []string{"3fa9c1"}) {
		t.Errorf("unknown ID: %#v", err)
	}
	_, err = d.UpdateTask("3fa9c1", Update{AddAgents: []string{"not one"}}, goldenNow)
	if !errors.As(err, &inv) || inv.Field != "agent" {
		t.Errorf("bad mention: %#v", err)
	}
	for _, e := range []error{err, d.NotFound("zzz")} {
		if strings.Contains(e.Error(), "--") {
			t.Errorf("%q names a flag", e)
		}
	}
}
