package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
)

// strictComparable tells whether the tolerant reader and a strict GFM reader
// must agree on d: a file with a row continued over several lines, or a row
// the tolerant reader could not read (wrong cell count, never ends), is read
// by the tolerant reader as GFM never could.
func strictComparable(d *Doc) bool {
	if len(d.ContinuedRows()) > 0 {
		return false
	}
	for _, p := range d.ReadProblems() {
		if p.Severity == SeverityError {
			return false
		}
	}
	return true
}

// strictTaskRows returns "line:ID" of every row of every top-level table a GFM
// renderer shows whose header names an ID and a Status column, in file order.
func strictTaskRows(src []byte) []string {
	var out []string
	for _, tb := range gfmtable.Parse(src) {
		if !tb.TopLevel {
			continue
		}
		id, status := -1, -1
		for i, h := range tb.Header {
			switch CanonicalColumn(strings.TrimSpace(strings.ReplaceAll(h, `\|`, "|"))) {
			case ColID:
				if id < 0 {
					id = i
				}
			case ColStatus:
				if status < 0 {
					status = i
				}
			}
		}
		if id < 0 || status < 0 {
			continue
		}
		for _, r := range tb.Rows {
			out = append(out, fmt.Sprintf("%d:%s", r.Line, strings.ReplaceAll(r.Cells[id], `\|`, "|")))
		}
	}
	return out
}

func tolerantTaskRows(d *Doc) []string {
	var out []string
	for _, t := range d.Tasks() {
		out = append(out, fmt.Sprintf("%d:%s", t.Line, t.ID))
	}
	return out
}

// FuzzTolerantAgreesWithStrict checks that on a file with no continued rows
// and no cell-count problems, the matrix reader finds exactly the task rows
// that GitHub shows: the same tables, the same number of rows, the same IDs
// in order.
//
//	go test ./matrix -run x -fuzz FuzzTolerantAgreesWithStrict -fuzztime 30s
func FuzzTolerantAgreesWithStrict(f *testing.F) {
	files := corpusFiles(f)
	realworld, _ := filepath.Glob(filepath.Join("..", "testdata", "realworld", "*", ".agent", "DEVELOPMENT_MATRIX.md"))
	if len(realworld) == 0 {
		f.Fatal("no real-world corpus under ../testdata/realworld")
	}
	for _, file := range append(files, realworld...) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if hasLoneCR(src) {
			// Classic Mac line endings (a CR alone) are not supported: the
			// reader's lines end at LF (docs/matrix-format.md), GFM's at CR too.
			t.Skip("a lone CR: not a supported line ending")
		}
		d := Parse(src)
		if !strictComparable(d) {
			t.Skip("continued rows or cell-count problems: GFM cannot read this file as written")
		}
		tolerant, strict := tolerantTaskRows(d), strictTaskRows(src)
		if !slices.Equal(tolerant, strict) {
			t.Fatalf("task rows (line:ID) differ\ntolerant: %q\nstrict (GFM): %q\ninput: %q", tolerant, strict, src)
		}
	})
}

// TestKnownStrictDisagreements holds the inputs on which the fuzzer once found
// the readers disagreeing: the tolerant reader must find the task rows GFM shows.
func TestKnownStrictDisagreements(t *testing.T) {
	for name, src := range map[string]string{
		// delimiterColumns allows only ' ' and '\t' as spaces; goldmark
		// (util.IsSpace) also a '\r' that is not part of the line ending.
		"cr inside the delimiter row": "| ID | Status |\n|----|--------|\r \n| a1b2c3 | TODO |\n",
		// A CR that no LF follows ends a line for goldmark: the header
		// starts after it.
		"lone CR before the header": "\r| ID | Status |\n|----|--------|\n| a1b2c3 | TODO |\n",
		// delimiterColumns("|") is (0, true): a 0-column delimiter row.
		"lone pipe line above the header": "Tasks\n|\n| ID | Status |\n|----|--------|\n| a1b2c3 | TODO |\n",
	} {
		t.Run(name, func(t *testing.T) {
			tolerant, strict := tolerantTaskRows(Parse([]byte(src))), strictTaskRows([]byte(src))
			if len(strict) == 0 || !slices.Equal(tolerant, strict) {
				t.Errorf("task rows (line:ID): tolerant %q, strict (GFM) %q; want the same, non-empty", tolerant, strict)
			}
		})
	}
}
