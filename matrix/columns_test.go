package matrix

import (
	"errors"
	"strings"
	"testing"
)

// AddColumns inserts the missing standard columns where the canonical header
// has them, in each line's own style, and changes no other byte.
func TestAddColumns(t *testing.T) {
	src := "# Matrix\n\nNotes.\n\n" +
		"| ID | Status | Priority | Description | Created | Updated |\n" +
		"|----|--------|----------|-------------|---------|---------|\n" +
		"| 260121185711 | TODO | P1 | First `a \\| b`. | 2026-01-21 | 2026-01-21 |\n" +
		"|260121185712|IN_PROGRESS|P2|Tight.|2026-01-21|2026-01-22|\n" +
		"\nText after.\n\n" +
		"| ID | Status | Agents | Description |\n|---|---|---|---|\n| a1 | DONE | @x | Second table. |\n"
	d := Parse([]byte(src))
	got, err := d.AddColumns([]string{ColAgents, ColMode, ColDiff, ColSkills}, map[string]map[string]string{"260121185712": {ColAgents: "@alice"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Matrix\n\nNotes.\n\n" +
		"| ID | Status | Priority | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
		"|----|--------|----------|---|---|---|---|-------------|---------|---------|\n" +
		"| 260121185711 | TODO | P1 |  |  |  |  | First `a \\| b`. | 2026-01-21 | 2026-01-21 |\n" +
		"|260121185712|IN_PROGRESS|P2||||@alice|Tight.|2026-01-21|2026-01-22|\n" +
		"\nText after.\n\n" +
		"| ID | Status | Diff | Mode | Skills | Agents | Description |\n|---|---|---|---|---|---|---|\n| a1 | DONE |  |  |  | @x | Second table. |\n"
	if string(d.Bytes()) != want {
		t.Errorf("got\n%s\nwant\n%s", d.Bytes(), want)
	}
	if len(got) != 2 || strings.Join(got[0].Added, ",") != "Diff,Mode,Skills,Agents" || got[0].Filled != 1 || got[1].Line != 12 {
		t.Errorf("report %+v", got)
	}
	if tk, _ := d.Task("260121185712"); strings.Join(tk.Agents, " ") != "@alice" || tk.Description != "Tight." {
		t.Errorf("the filled row: %+v", tk)
	}
	if len(d.Diagnostics()) != 0 {
		t.Errorf("diagnostics %v", d.Diagnostics())
	}
	// Every standard column: the second table still lacks Pri, Created and
	// Updated (the last one after its last column).
	r, err := d.AddColumns(nil, nil)
	if err != nil || len(r) != 1 || strings.Join(r[0].Added, ",") != "Pri,Created,Updated" ||
		!strings.HasSuffix(string(d.Bytes()), "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n|---|---|---|---|---|---|---|---|---|---|\n| a1 | DONE |  |  |  |  | @x | Second table. |  |  |\n") {
		t.Errorf("second add: %+v %v\n%s", r, err, d.Bytes())
	}
	if r, err := d.AddColumns(nil, nil); err != nil || len(r) != 0 {
		t.Errorf("nothing left to add: %+v %v", r, err)
	}
}

func TestAddColumnsRefusesContinuedRows(t *testing.T) {
	src := "| ID | Status | Description |\n|---|---|---|\n| a1 | TODO | one\ntwo |\n"
	d := Parse([]byte(src))
	if _, err := d.AddColumns([]string{ColAgents}, nil); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "validate --fix") {
		t.Errorf("err = %v", err)
	}
	if string(d.Bytes()) != src {
		t.Error("changed")
	}
}
