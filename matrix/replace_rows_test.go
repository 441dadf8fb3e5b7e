package matrix

import (
	"errors"
	"strings"
	"testing"
)

func TestReplaceRowsAt(t *testing.T) {
	src := "# M\n\n| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | one\ntwo |\n| b2 | DONE |  fine  |\n|  | TODO | no id\n\nmore |\n\nAfter.\n"
	d := Parse([]byte(src))
	if len(d.ContinuedRows()) != 2 {
		t.Fatalf("continued rows: %+v", d.ContinuedRows())
	}
	// An invalid edit (a bare |) changes nothing.
	err := d.ReplaceRowsAt([]RowEdit{{5, []string{"a1", "TODO", "one<br>two"}}, {8, []string{"", "TODO", "no | id"}}})
	if !errors.Is(err, ErrInvalid) || string(d.Bytes()) != src {
		t.Fatalf("err %v, doc changed: %v", err, string(d.Bytes()) != src)
	}
	if err := d.ReplaceRowsAt([]RowEdit{{8, []string{"", "TODO", "no id<br><br>more"}}, {5, []string{"a1", "TODO", "one<br>two"}}}); err != nil {
		t.Fatal(err)
	}
	want := "# M\n\n| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | one<br>two |\n| b2 | DONE |  fine  |\n|  | TODO | no id<br><br>more |\n\nAfter.\n"
	if got := string(d.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, dg := range d.Diagnostics() {
		if strings.Contains(dg.Message, "goes on over") {
			t.Errorf("still continued: %s", dg)
		}
	}
	if tk, ok := d.Task("a1"); !ok || tk.Description != "one\ntwo" || tk.Line != 5 {
		t.Errorf("a1 = %+v", tk)
	}
	if err := d.ReplaceRowsAt([]RowEdit{{99, []string{"x", "y", "z"}}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown line: %v", err)
	}
}

// In a table without outer pipes, a row written with them keeps them.
func TestReplaceRowKeepsItsOuterPipes(t *testing.T) {
	src := "ID | Status | Description\n---|---|---\na1 | TODO | plain\n| b2 | DONE | piped |\n"
	d := Parse([]byte(src))
	if err := d.ReplaceRowsAt([]RowEdit{{3, []string{"a1", "TODO", "plain too"}}, {4, []string{"b2", "DONE", "still piped"}}}); err != nil {
		t.Fatal(err)
	}
	want := "ID | Status | Description\n---|---|---\na1 | TODO | plain too\n| b2 | DONE | still piped |\n"
	if got := string(d.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
