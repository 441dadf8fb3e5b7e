package gfmtable

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseReadsCellsAsWritten(t *testing.T) {
	src := "# M\n\nprose\n\n|  ID | Status |Description|\n|---|:--:|---|\n| a1 |TODO|  fix `x` \\| y  |\n|b2| DONE | [link](http://e.x) 🙂 |\n\nafter\n"
	got := Parse([]byte(src))
	want := []Table{{
		Line: 5, TopLevel: true,
		Header: []string{"ID", "Status", "Description"},
		Rows: []Row{
			{Line: 7, Cells: []string{"a1", "TODO", "fix `x` \\| y"}},
			{Line: 8, Cells: []string{"b2", "DONE", "[link](http://e.x) 🙂"}},
		},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse =\n%#v\nwant\n%#v", got, want)
	}
}

// GFM pads a short row and drops the cells past the header's count; a pipe in
// backticks splits the cell too (only `\|` does not).
func TestParsePadsShortRowsAndDropsExtraCells(t *testing.T) {
	src := "| A | B | C |\n|---|---|---|\n| 1 | 2 |\n| 1 | `x | y` | 3 | 4 |\n"
	got := Parse([]byte(src))
	if len(got) != 1 {
		t.Fatalf("got %d tables, want 1", len(got))
	}
	want := []Row{{Line: 3, Cells: []string{"1", "2", ""}}, {Line: 4, Cells: []string{"1", "`x", "y`"}}}
	if !reflect.DeepEqual(got[0].Rows, want) {
		t.Fatalf("rows = %#v, want %#v", got[0].Rows, want)
	}
}

// A line break inside a cell ends the table for a GFM renderer: the rest of
// the record, and every row after it, is no longer in a table.
func TestParseEndsTableAtContinuedRow(t *testing.T) {
	src := strings.Join([]string{
		"| ID | Status | Description | Created |",
		"|----|--------|-------------|---------|",
		"| 1 | TODO | first | 2026-01-01 |",
		"| 2 | TODO | a list:",
		"1. one",
		"2. two",
		"| 2026-01-02 |",
		"| 3 | DONE | lost for GFM | 2026-01-03 |",
		"",
	}, "\n")
	got := Parse([]byte(src))
	if len(got) != 1 {
		t.Fatalf("got %d tables, want 1: %#v", len(got), got)
	}
	var ids []string
	for _, r := range got[0].Rows {
		ids = append(ids, r.Cells[0])
	}
	if !reflect.DeepEqual(ids, []string{"1", "2"}) {
		t.Fatalf("GFM rows = %v, want [1 2] (the table ends at the list)", ids)
	}
}

func TestParseSkipsCodeAndMarksNestedTables(t *testing.T) {
	src := "```\n| A | B |\n|---|---|\n| 1 | 2 |\n```\n\n> | Q | R |\n> |---|---|\n> | 3 | 4 |\n\n| X |\n|---|\n| 5 |\n"
	got := Parse([]byte(src))
	if len(got) != 2 {
		t.Fatalf("got %d tables, want 2 (none from the code block): %#v", len(got), got)
	}
	if got[0].TopLevel || got[0].Header[0] != "Q" {
		t.Errorf("first table = %#v, want the nested Q|R table, TopLevel false", got[0])
	}
	if !got[1].TopLevel || got[1].Line != 11 || got[1].Column("x") != 0 || got[1].Column("Y") != -1 {
		t.Errorf("second table = %#v, want the top-level X table on line 11", got[1])
	}
}

// The legacy corpus file is what GitHub shows as it is: two legends and one
// table per priority section.
func TestParseLegacyCorpus(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "realworld", "legacy", ".agent", "DEVELOPMENT_MATRIX.md"))
	if err != nil {
		t.Fatal(err)
	}
	tables := Parse(src)
	items := 0
	var sections int
	for _, tb := range tables {
		if tb.Column("Item") == 0 {
			sections++
			items += len(tb.Rows)
		}
	}
	if len(tables) != 6 || sections != 4 || items != 42 {
		t.Fatalf("got %d tables, %d Item tables, %d items; want 6, 4, 42", len(tables), sections, items)
	}
}

// Windows editors write a byte order mark; GitHub ignores it, so the table
// still starts on line 1.
func TestParseIgnoresByteOrderMark(t *testing.T) {
	got := Parse([]byte("\ufeff| ID | Status |\r\n|---|---|\r\n| a1 | TODO |\r\n"))
	if len(got) != 1 || got[0].Line != 1 || got[0].Header[0] != "ID" || len(got[0].Rows) != 1 || got[0].Rows[0].Cells[1] != "TODO" {
		t.Fatalf("Parse = %#v, want one table on line 1 with header ID, Status and one row", got)
	}
}

// A header with fewer cells than the delimiter row makes no table in GFM
// (spec example 203), though goldmark pads it; a written empty header cell
// still counts.
func TestParseRejectsShortHeader(t *testing.T) {
	for _, src := range []string{"ID|Status\n-|-|-\n0\n", "| ID | Status |\n|---|---|---|\n| 0 | x | y |\n"} {
		if got := Parse([]byte(src)); len(got) != 0 {
			t.Errorf("Parse(%q) = %#v, want no table", src, got)
		}
	}
	got := Parse([]byte("| ID | Status | |\n|---|---|---|\n| 0 | x | y |\n"))
	if len(got) != 1 || !reflect.DeepEqual(got[0].Header, []string{"ID", "Status", ""}) {
		t.Errorf("a written empty header cell: Parse = %#v, want one table with header [ID Status \"\"]", got)
	}
}
