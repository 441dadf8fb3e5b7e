package matrix

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// selectDocs are matrices whose structure could fool a line-level prefilter.
var selectDocs = []string{
	querySrc,
	string(testmatrix.Generate(300, 7)),
	// Rows in code, quotes and lists are not tasks, before or after dropping lines.
	"# M\n\n```\n\n| ID | Status |\n|----|--------|\n| aaaaaa | TODO |\n| bbbbbb | DONE |\n```\n\n| ID | Status |\n|---|---|\n| cccccc | TODO |\n| dddddd | DONE |\n",
	"> | ID | Status |\n> |---|---|\n> | aaaaaa | TODO |\n| bbbbbb | DONE |\n\n| ID | Status |\n|---|---|\n| cccccc | DONE |\n",
	"- item\n\n  | ID | Status |\n  |---|---|\n  | aaaaaa | TODO |\n  | bbbbbb | DONE |\n\n| ID | Status |\n|---|---|\n| cccccc | TODO |\n",
	"<!--\n\n| ID | Status |\n|---|---|\n| aaaaaa | DONE |\n-->\n\n| ID | Status |\n|---|---|\n| bbbbbb | TODO |\n",
	// A table right after prose (no blank line), and one right after another table.
	"Prose line\n| ID | Status |\n|---|---|\n| aaaaaa | TODO |\n| bbbbbb | DONE |\n",
	"| ID | Status |\n|---|---|\n| aaaaaa | TODO |\n| ID | Status | Pri |\n|---|---|---|\n| bbbbbb | DONE | P1 |\n| cccccc | TODO | P2 |\n",
	// Broken rows (a line break inside a cell), short and long rows, duplicates.
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | DONE | one\ntwo |\n| bbbbbb | TODO | x |\n| cccccc | DONE | y |\n",
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | DONE |\n| bbbbbb | TODO | x |\n| cccccc | DONE | y | z |\n| dddddd | DONE | w |\n",
	"| ID | Status |\n|---|---|\n| aaaaaa | DONE |\n| aaaaaa | TODO |\n| bbbbbb | todo |\n| cccccc | in progress |\n| dddddd | WIP |\n",
	// Rows broken in their last cell: no closing pipe, continuation without an opening pipe.
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | DONE | one\ntwo |\n| bbbbbb | TODO | x |\n",
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | TODO | x |\n| bbbbbb | DONE | one\ntwo |\n| cccccc | TODO | y |\n",
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | TODO | x |\n| bbbbbb | DONE | y |\nlazy | tail |\n| cccccc | TODO | z |\n",
	// Lone CRs end lines too.
	"| ID | Status | Description |\n|---|---|---|\n| x |\r| y |\n| aaaaaa | TODO | z |\n",
	"| ID | Status | Description |\r|---|---|---|\r| aaaaaa | DONE | y |\r| bbbbbb | TODO | z |\r",
	// Escaped pipes, CRLF, tabs, indentation, rows after the table, no final newline.
	"| ID | Status | Description |\r\n|---|---|---|\r\n| aaaaaa | DONE | a \\| b |\r\n| bbbbbb | TODO | c \\| TODO |\r\n",
	"| ID | Status |\n|---|---|\n\t| aaaaaa | TODO |\n| bbbbbb | DONE |\n   | cccccc | TODO |\n    | dddddd | TODO |\n| eeeeee | DONE |",
	"| ID | Status |\n|---|---|\n| aaaaaa | DONE |\ntrailing prose\n| bbbbbb | TODO |\n---\n| cccccc | TODO |\n",
	"ID | Status\n--- | ---\naaaaaa | TODO\nbbbbbb | DONE\n",
	// Non-ASCII that case-folds onto ASCII (Kelvin sign, long s).
	"| ID | Status | Mode |\n|---|---|---|\n| aaaaaa | BLOC\u212aED | coder |\n| bbbbbb | IN_PROGREſS | ſcout |\n| cccccc | DONE | Ünï |\n",
	"",
	"no tables at all\n",
	// Continued rows (lists, fences, headings, blank lines inside a cell),
	// unreadable rows, stray lines, tables inside continued cells.
	"| ID | Status | Description | Created |\n|---|---|---|---|\n| aaaaaa | TODO | x:\n\n```\n\n| ID | Status | Description | Created |\n|---|---|---|---|\n| bbbbbb | DONE | y | 2026-01-01 |\n```\n| 2026-01-01 |\n| cccccc | DONE | z | 2026-01-01 |\n",
	"Intro\n| ID | Status | Description | Created |\n|---|---|---|---|\n| aaaaaa | TODO | x:\n\n| ID | Status | Description | Created |\n|---|---|---|---|\n| bbbbbb | DONE | y | 2026-01-01 |\n| cccccc | TODO | z | 2026-01-01 |\n",
	"| ID | Status | Description | Created |\n|---|---|---|---|\n| aaaaaa | TODO | Steps:\n- one\n- two\n| 2026-01-01 |\n| bbbbbb | DONE | after | 2026-01-02 |\n\n| ID | Status |\n|---|---|\n| cccccc | TODO |\n| dddddd | DONE |\n",
	"| ID | Status | Description | Created |\n|---|---|---|---|\n| aaaaaa | TODO | a | 2026-01-01 |\ntext\n\n| ID | Status | Description | Created |\n|---|---|---|---|\n| bbbbbb | DONE | y | 2026-01-01 |\n| cccccc | TODO | z | 2026-01-01 |\n",
	"| ID | Status |\n|---|---|\n| aaaaaa | TODO |\n\n| bbbbbb | DONE |\n\n| ID | Status |\n|---|---|\n| cccccc | TODO | x |\n| dddddd | DONE |\n| eeeeee | TODO |\n",
	"| ID | Status | Description |\n|---|---|---|\n| aaaaaa | TODO | never\n\nends\n\n| ID | Status |\n|---|---|\n| bbbbbb | TODO |\n| cccccc | DONE |\n",
}

func init() {
	src, err := os.ReadFile(filepath.Join("testdata", "rows", "real.md"))
	if err != nil {
		panic(err)
	}
	selectDocs = append(selectDocs, string(src), strings.ReplaceAll(string(src), "\n", "\r\n"))
}

var selectQueries = []Query{
	{ID: "aaaaaa"},
	{ID: "bbbbbb"},
	{ID: "cccccc", Status: []string{"TODO"}},
	{ID: testmatrix.ID(150)},
	{ID: "ffffff"},
	{ID: "260121101505"},
	{ID: "260121101503"},
	{Status: []string{"REVIEW"}},
	{Text: "fence"},
	{Text: "jitter"},
	{Status: []string{"TODO"}},
	{Status: []string{"DONE", "in progress"}},
	{Status: []string{"BLOCKED"}},
	{Status: []string{"WIP"}},
	{Priority: []string{"P1"}},
	{Mode: "coder"},
	{Mode: "scout"},
	{Agent: "reviewer"},
	{Skill: "go-testing"},
	{Text: "todo"},
	{Text: "a | b"},
	{Text: "two"},
	{Text: "tail"},
	{Text: "y"},
	{Status: []string{"TODO"}, Sort: "priority", Limit: 3},
	{},
}

func TestQuerySelectMatchesApply(t *testing.T) {
	for di, src := range selectDocs {
		for _, q := range selectQueries {
			want := q.Apply(Parse([]byte(src)).Tasks())
			got := q.Select([]byte(src))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("doc %d, query %+v:\nSelect: %+v\nApply:  %+v", di, q, got, want)
			}
		}
	}
}

// The prefilter must actually drop rows on a typical matrix, or it is useless.
func TestQuerySelectReduces(t *testing.T) {
	src := testmatrix.Generate(1000, 3)
	q := Query{Status: []string{"TODO"}}.lenientWith(nil)
	reduced, lineOf, dropped := q.reduce(src, nil)
	if dropped < 600 || len(reduced) > len(src)/2 || len(lineOf) != strings.Count(string(reduced), "\n") {
		t.Errorf("dropped %d lines, %d of %d bytes left", dropped, len(reduced), len(src))
	}
}

func FuzzQuerySelect(f *testing.F) {
	for _, d := range selectDocs[2:] {
		f.Add(d, "TODO", "")
		f.Add(d, "DONE", "a")
	}
	f.Fuzz(func(t *testing.T, src, status, text string) {
		q := Query{Status: []string{status}, Text: text}
		if len(text) == 6 { // sometimes look one ID up, as FindTask does
			q = Query{ID: text}
		}
		want := q.Apply(Parse([]byte(src)).Tasks())
		got := q.Select([]byte(src))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Select differs from Apply for %q (status %q, text %q):\n%+v\n%+v", src, status, text, got, want)
		}
	})
}

func BenchmarkQuerySelect(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		src := testmatrix.Generate(n, 1)
		q := Query{Status: []string{"TODO"}}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				q.Select(src)
			}
		})
	}
}

// FuzzQuerySelectTable fuzzes the lines of a task table, where the prefilter
// does its work, and compares Select with Apply(Parse).
func FuzzQuerySelectTable(f *testing.F) {
	f.Add("| aaaaaa | DONE | one\ntwo |\n| bbbbbb | TODO | x |\n", "TODO", "two")
	f.Add("| aaaaaa | TODO | x |\n| bbbbbb | DONE | y |\nlazy | tail |\n| cccccc | TODO | z |\n", "DONE", "")
	f.Add("| aaaaaa | DONE |\n| bbbbbb | TODO | x |\n| cccccc | DONE | y | z |\n", "done", "y")
	f.Add("| x |\r| y |\n| aaaaaa | TODO | z |\n", "TODO", "y")
	f.Add("| aaaaaa | in progress | a \\| b |\n\n| ID | Status |\n|---|---|\n| bbbbbb | TODO |\n", "IN_PROGRESS", "a | b")
	f.Fuzz(func(t *testing.T, rows, status, text string) {
		src := "# M\n\n| ID | Status | Description |\n|---|---|---|\n" + rows
		q := Query{Status: []string{status}, Text: text}
		want := q.Apply(Parse([]byte(src)).Tasks())
		got := q.Select([]byte(src))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Select differs from Apply for %q (status %q, text %q):\n%+v\n%+v", src, status, text, got, want)
		}
	})
}

// referenceCells is the plain byte loop appendCells replaced: GFM's cell
// split, one byte at a time.
func referenceCells(dst []cellSpan, src []byte, start, end int) []cellSpan {
	for start < end && isSpace(src[start]) {
		start++
	}
	for end > start && isSpace(src[end-1]) {
		end--
	}
	if start < end && src[start] == '|' {
		start++
	}
	if end > start && src[end-1] == '|' {
		end--
	}
	for pos := start; pos < end; {
		closure := pos
		for closure < end && !(src[closure] == '|' && (closure == 0 || src[closure-1] != '\\')) {
			closure++
		}
		dst = append(dst, makeCell(src, pos, closure))
		pos = closure + 1
	}
	return dst
}

func FuzzFastCells(f *testing.F) {
	for _, s := range []string{"| a | b |", "|", "||", "a|b", `| a \| b |`, `\|`, " | x \\|", "|a||b|", "", "  \t| a |\t "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		src := []byte("x\n" + line + "\n")
		start, end := 2, 2+len(line)
		want := referenceCells(nil, src, start, end)
		got := appendCells(nil, src, start, end)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("appendCells(%q) = %v, byte loop = %v", line, got, want)
		}
		// At offset 0 too (the "no byte before the pipe" case).
		if got, want := appendCells(nil, []byte(line), 0, len(line)), referenceCells(nil, []byte(line), 0, len(line)); !reflect.DeepEqual(got, want) {
			t.Errorf("at 0: appendCells(%q) = %v, byte loop = %v", line, got, want)
		}
	})
}
