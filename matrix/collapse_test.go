package matrix

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// parseSummary renders everything a parse decides: tables, tasks, diagnostics.
func parseSummary(d *Doc) string {
	var b strings.Builder
	for _, t := range d.tables {
		fmt.Fprintf(&b, "table line %d task=%v cols=%d rows=%d lastEnd=%d\n", t.headerLine, t.isTask, len(t.cols), len(t.rows), t.lastEnd)
	}
	tasks, _ := json.Marshal(d.Tasks())
	b.Write(tasks)
	b.WriteByte('\n')
	for _, dg := range d.Diagnostics() {
		b.WriteString(dg.String() + "\n")
	}
	return b.String()
}

// parseBothWays parses src with run collapsing forced on every run of 2+ lines
// and with it off, and fails when the two disagree.
func parseBothWays(t testing.TB, src []byte) {
	t.Helper()
	oldBytes, oldLines := collapseMinBytes, collapseMinLines
	defer func() { collapseMinBytes, collapseMinLines = oldBytes, oldLines }()
	collapseMinBytes = math.MaxInt
	full := parseSummary(Parse(src))
	collapseMinBytes, collapseMinLines = 0, 2
	cut := parseSummary(Parse(src))
	if full != cut {
		t.Fatalf("collapsed parse differs from the full parse\nfull:\n%s\ncollapsed:\n%s", full, cut)
	}
}

// Tables of '|' lines inside every kind of block, next to ones that are real
// tables: goldmark must judge each run exactly as it judges its first line.
const collapseTricky = "# Tricky\n\n" +
	"```\n| 000001 | TODO |\n| 000002 | TODO |\n| 000003 | TODO |\n```\n\n" +
	"<div>\n| 000004 | TODO |\n| 000005 | TODO |\n| 000006 | TODO |\n</div>\n\n" +
	"<!--\n| 000007 | TODO |\n| 000008 | TODO | -->\n| 000009 | TODO |\n\n" +
	"> | ID | Status |\n| --- | --- |\n| 00000a | TODO |\n| 00000b | TODO |\n\n" +
	"- item\n| ID | Status |\n| --- | --- |\n| 00000c | TODO |\n\n" +
	"    | ID | Status |\n    |---|---|\n    | 00000d | TODO |\n\n" +
	"Intro line\n| ID | Status |\n|---|---|\n| 00000e | TODO |\n| 00000f | DONE |\n| 000010 | TODO |\n---\n\n" +
	"| ID | Status |\n|---|---|\n| 000011 | TODO |\r| 000012 | TODO |\n| 000013 | TODO |\n\n" +
	"| ID | Status |\n|---|---|\n| 000014 | TODO |\n| 000015 | TODO |\n| 000016 | TODO |"

func TestCollapsedParseMatchesFullParse(t *testing.T) {
	inputs := map[string][]byte{
		"tricky":  []byte(collapseTricky),
		"gen1000": testmatrix.Generate(1000, 7),
	}
	for _, file := range corpusFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inputs[file] = src
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) { parseBothWays(t, src) })
	}
}

func TestLargeMatrixIsCollapsed(t *testing.T) {
	src := testmatrix.Generate(2000, 3)
	c := collapseRuns(src)
	if c == nil || len(c.red) > len(src)/10 {
		t.Fatalf("a 2,000-row matrix should reach goldmark as a few lines; got %v", c != nil)
	}
	if got := len(Parse(src).Tasks()); got != 2000 {
		t.Fatalf("parsed %d tasks, want 2000", got)
	}
}

// FuzzCollapseSameAsFull: whatever the input, cutting runs of '|' lines
// before goldmark sees them changes nothing in the result.
//
//	go test ./matrix -run x -fuzz FuzzCollapseSameAsFull -fuzztime 2m
func FuzzCollapseSameAsFull(f *testing.F) {
	for _, file := range corpusFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	rows, _ := filepath.Glob(filepath.Join("testdata", "rows", "*.md"))
	for _, file := range rows {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(collapseTricky))
	f.Fuzz(func(t *testing.T, src []byte) { parseBothWays(t, src) })
}
