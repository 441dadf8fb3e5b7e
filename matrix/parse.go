package matrix

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Doc is a parsed matrix file: the original bytes plus the tables and task rows
// found in them.
type Doc struct {
	src    []byte
	str    string // src as one string: cell values are substrings of it, no copy each
	tables []*table
	rows   []*row          // task rows in file order
	ids    idIndex         // byID
	unread map[string]*row // rows that could not be read, by the plausible ID in their ID cell
	why    map[int]string  // why a row could not be read, by its start (row.span.start)
	diags  []Diagnostic
	// problems are the diagnostics of rows a read does not return: rows that
	// could not be read, `|`-led lines that belong to no table.
	problems []Diagnostic
	// strays are the runs of `|`-led lines that belong to no table, as
	// first and last line numbers (migrate reads headerless item rows).
	strays [][2]int
	lines  *lineIndex
	vocab  *Vocabulary // nil: the default vocabulary
}

type column struct {
	name      string // as written in the header
	canonical string // canonical name or ""
}

type table struct {
	headerLine int // 1-based
	header     span
	cols       []column
	colIndex   map[string]int // canonical name → index
	slab       []cellSpan     // the cells of its rows, one after the other
	kinds      []columnKind   // what readTask checks in each column
	isTask     bool
	rows       []*row
	lastEnd    int    // end of the last line's content (before its line ending)
	brokenEnd  *row   // the last row, when it never ends
	eol        string // line ending of the header line
	pipes      bool   // header starts with '|'
}

type row struct {
	tbl     *table
	line    int32  // first line
	endLine int32  // last line: > line for a row that goes on over several lines
	span    span32 // from the first line's start to the last line's content end, without its line ending
	// The row's cells are tbl.slab[c0 : c0+nc] (cells): an index, not a
	// slice header of its own, saves 16 of a row's bytes.
	c0, nc int32
	id     string // the ID cell's value
	bad    bool   // row has errors
	// unreadable is wrongCount or neverEnds for a row that is no task;
	// stoppedBy is the line that started something new before the row
	// ended (Doc.problemOf says why). (Small types, next to bad, and the
	// rare message kept aside: a large matrix's rows are most of its
	// parse's memory.)
	unreadable uint8
	stoppedBy  int32
}

// bytesToString shares src's memory: a Doc never modifies its bytes (edits
// build a new slice), and copying a large matrix costs more than parsing it.
func bytesToString(src []byte) string {
	if len(src) == 0 {
		return ""
	}
	return unsafe.String(&src[0], len(src))
}

// Parse reads a matrix file with the default vocabulary. It never fails:
// problems become diagnostics. The Doc keeps src without copying it: do not
// modify src afterwards.
func Parse(src []byte) *Doc { return ParseWith(src, nil) }

// Vocabulary is the vocabulary d was read with.
func (d *Doc) Vocabulary() *Vocabulary {
	if d.vocab == nil {
		return DefaultVocabulary()
	}
	return d.vocab
}

// ParseWith is Parse with a workspace's vocabulary (nil: the default). Edits
// of the Doc keep using it.
func ParseWith(src []byte, v *Vocabulary) *Doc {
	d := &Doc{src: src, str: bytesToString(src), lines: newLineIndex(src), vocab: v}
	pc := parser.NewContext()
	input := src
	if c := collapseRuns(src); c != nil {
		pc.Set(collapsedKey, c)
		input = c.red
	}
	blockParser.Parse(text.NewReader(input), parser.WithContext(pc))
	found, _ := pc.Get(foundTablesKey).([]foundTable)
	var taken []lineRun // lines of tables, continued rows included
	for _, ft := range found {
		if n := len(taken); n > 0 && ft.headerLine.start <= taken[n-1].end {
			continue // inside a row of the table before: part of a cell
		}
		end := d.addTable(ft)
		taken = append(taken, lineRun{ft.headerLine.start, end})
	}
	strays, _ := pc.Get(strayRunsKey).([]lineRun)
	d.reportStrays(strays, taken)
	return d
}

// addTable reads a table found by tableFinder and returns the end of its
// last line's content.
func (d *Doc) addTable(ft foundTable) int {
	header, headerLine := ft.header, ft.headerLine
	t := &table{
		headerLine: d.lines.line(headerLine.start),
		header:     headerLine,
		colIndex:   map[string]int{},
		eol:        "\n",
		pipes:      bytes.HasPrefix(bytes.TrimLeft(d.src[headerLine.start:headerLine.end], " \t"), []byte{'|'}),
	}
	if headerLine.end < len(d.src) && d.src[headerLine.end] == '\r' {
		t.eol = "\r\n"
	}
	var dups []int // header cells naming a column a second time
	for i, c := range header {
		name := strings.TrimSpace(unescapeCell(d.str[c.text.start:c.text.end]))
		col := column{name: name, canonical: CanonicalColumn(name)}
		if col.canonical != "" {
			if _, dup := t.colIndex[col.canonical]; dup {
				// Only the first one is read and written; the other is kept
				// as an extra column, and reported below.
				dups = append(dups, i)
				col.canonical = ""
			} else {
				t.colIndex[col.canonical] = len(t.cols)
			}
		}
		t.cols = append(t.cols, col)
	}
	t.kinds = columnKinds(t.cols) // now: a Doc may be read from several goroutines
	t.lastEnd = ft.paraEnd
	_, hasID := t.colIndex[ColID]
	_, hasStatus := t.colIndex[ColStatus]
	t.isTask = hasID && hasStatus
	d.tables = append(d.tables, t)
	if !t.isTask {
		if (hasID || hasStatus) && len(t.colIndex) >= 3 {
			missing := ColID
			if hasID {
				missing = ColStatus
			}
			d.errorAt(headerLine.start, "task table header has no %s column; a task table needs both ID and Status", missing)
		}
		return t.lastEnd
	}
	for _, i := range dups {
		first := t.cols[t.colIndex[CanonicalColumn(t.cols[i].name)]].name
		d.errorAt(int(header[i].text.start), "column %q repeats column %q (%s); a task table has each column once", t.cols[i].name, first, CanonicalColumn(first))
	}
	paraEnd := t.lastEnd
	t.lastEnd = d.scanRows(t, nextLine(d.src, ft.delimLine.start), t.headerLine+2, paraEnd, ft.estimate, ft.delimLine.end)
	return t.lastEnd
}
