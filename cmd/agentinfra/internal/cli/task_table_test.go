package cli

import (
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// On an 80-column terminal the table gives up AGENTS and SKILLS for the
// description; ID, STATUS and PRI stay whole and a description that does
// not fit ends in an ellipsis.
func TestCLITaskListFitsTerminalWidth(t *testing.T) {
	root := fixtureWS(t)
	list := func(width int) string {
		t.Helper()
		code, out, errOut := runCLI(t, root, cliOpts{TTY: true, Width: width, Env: map[string]string{"NO_COLOR": "1"}}, "task", "list")
		if code != 0 {
			t.Fatalf("width %d: exit %d: %s", width, code, errOut)
		}
		return out
	}
	want80 := "" +
		"ID      STATUS       PRI  DIFF  MODE      UPDATED     DESCRIPTION\n" +
		"a1b2c3  TODO         P2   med   coder     2026-11-02  Add retry to the fetcher\n" +
		"b2c3d4  IN_PROGRESS  P1   hard  coder     2026-11-20  Make the store lock fair …\n" +
		"c3d4e5  BLOCKED      P3   easy  explorer  2026-09-06  Map the parser\n" +
		"d4e5f6  REVIEW       P2   med   reviewer  2026-11-19  Review the lock code\n" +
		"e5f6a7  DONE         P4   easy  oracle    2026-08-02  Decide the ID format\n"
	if got := list(80); got != want80 {
		t.Errorf("width 80:\n%s\nwant:\n%s", got, want80)
	}
	// A little wider, AGENTS shrinks (cut with an ellipsis) rather than go.
	want100 := "" +
		"ID      STATUS       PRI  DIFF  MODE      SKILLS      AGENTS        UPDATED     DESCRIPTION\n" +
		"a1b2c3  TODO         P2   med   coder     go-testing  @coder        2026-11-02  Add retry to the fe…\n" +
		"b2c3d4  IN_PROGRESS  P1   hard  coder                 @coder @rev…  2026-11-20  Make the store lock…\n"
	if got := list(100); !strings.HasPrefix(got, want100) {
		t.Errorf("width 100:\n%s\nwant it to start:\n%s", got, want100)
	}

	checkTableFits(t, root, 40, 130)

	// A matrix as people write them: 12-digit IDs, long modes and skill
	// lists, no alignment.
	people := rowsWS(t, []byte(`| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|---|---|---|---|---|---|---|---|---|---|
| 260120204151 | IN_PROGRESS | P1 | hard | deep-researcher | go-testing,code-review,docs | @deep-researcher @reviewer | Find out why the nightly build takes twice as long since the cache moved | 2026-01-20 | 2026-01-21 |
| 260120204152 | TODO | P3 | easy | coder | | | Fix typo | 2026-01-20 | 2026-01-20 |
| 260120204153 | REVIEW | P2 | med | reviewer | code-review | @reviewer | Review the importer: it reads 40 columns and writes 12, with a mapping table that nobody has checked | 2026-01-20 | 2026-01-22 |
`))
	checkTableFits(t, people, 50, 130)
	want := "" +
		"ID            STATUS       PRI  DIFF  MODE             DESCRIPTION\n" +
		"260120204151  IN_PROGRESS  P1   hard  deep-researcher  Find out why the nightly…\n"
	if _, out, _ := runCLI(t, people, cliOpts{TTY: true, Width: 80, Env: map[string]string{"NO_COLOR": "1"}}, "task", "list"); !strings.HasPrefix(out, want) {
		t.Errorf("width 80, 12-digit IDs:\n%s\nwant it to start:\n%s", out, want)
	}
	// Wide characters (CJK, emoji: two columns each) are cut by the columns
	// they take on the terminal, not by their count (issue 19).
	wide := rowsWS(t, []byte(`| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|---|---|---|---|---|---|---|---|---|---|
| 260120204151 | TODO | P1 | hard | coder | 日本語 | @田中 | 日本語の説明文がとても長いのでターミナルの幅を超えてしまいます 🚀🚀🚀 | 2026-01-20 | 2026-01-21 |
| 260120204152 | TODO | P3 | easy | coder | | | 🐛 Fix the crash when the title is 👩‍💻 emoji only 🐛🐛🐛🐛🐛🐛 | 2026-01-20 | 2026-01-20 |
`))
	checkTableFits(t, wide, 50, 110)
	if t.Failed() {
		t.Log("the table at width 60:\n" + list(60))
	}
}

// checkTableFits lists root's tasks on terminals from minWidth to maxWidth
// columns: no line is wider, ID, STATUS and PRI are whole in every row, and
// each description is whole or cut with an ellipsis.
func checkTableFits(t *testing.T, root string, minWidth, maxWidth int) {
	t.Helper()
	tsv := func() [][]string {
		_, out, _ := runCLI(t, root, cliOpts{}, "task", "list")
		var rows [][]string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			rows = append(rows, strings.Split(l, "\t"))
		}
		return rows
	}()
	for width := minWidth; width <= maxWidth; width++ {
		lines := strings.Split(strings.TrimSuffix(tableAt(t, root, width), "\n"), "\n")
		if len(lines) != len(tsv)+1 {
			t.Fatalf("width %d: %d lines for %d tasks", width, len(lines), len(tsv))
		}
		for i, l := range lines {
			if n := runewidth.StringWidth(l); n > width {
				t.Errorf("width %d: line is %d columns wide: %q", width, n, l)
			}
			if i == 0 {
				continue
			}
			row := tsv[i-1]
			if f := strings.Fields(l); len(f) < 4 || f[0] != row[0] || f[1] != row[1] || f[2] != row[2] {
				t.Errorf("width %d: ID, STATUS and PRI not whole: %q (task %v)", width, l, row[:3])
			}
			if desc := row[7]; !strings.HasSuffix(l, desc) {
				cut := l[strings.LastIndex(l, "  ")+2:]
				if !strings.HasSuffix(cut, "…") || !strings.HasPrefix(desc, strings.TrimSuffix(cut, "…")) {
					t.Errorf("width %d: description %q neither whole nor cut with an ellipsis: %q", width, desc, l)
				}
			}
		}
	}
}

func tableAt(t *testing.T, root string, width int) string {
	t.Helper()
	code, out, errOut := runCLI(t, root, cliOpts{TTY: true, Width: width, Env: map[string]string{"NO_COLOR": "1"}}, "task", "list")
	if code != 0 {
		t.Fatalf("width %d: exit %d: %s", width, code, errOut)
	}
	return out
}
