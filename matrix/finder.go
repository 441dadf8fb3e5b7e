package matrix

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// blockParser decides what is a paragraph, a code block or an HTML block. GFM's
// own table transformer is slow on large files (and truncates or pads bad
// rows), so tableFinder finds tables in top-level paragraphs with the same
// rules and removes those paragraphs, which also spares them goldmark's inline
// pass: a 10,000-row table is one paragraph of 10,000 lines.
var blockParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(),
	parser.WithParagraphTransformers(util.Prioritized(tableFinder{}, 100)),
)

var (
	foundTablesKey = parser.NewContextKey()
	strayRunsKey   = parser.NewContextKey() // []lineRun: `|`-led lines in paragraphs without a table
	collapsedKey   = parser.NewContextKey() // *collapsed, when Parse cut long runs
)

var utf8BOM = []byte("\ufeff")

// foundTable is a table as tableFinder saw it in a paragraph.
type foundTable struct {
	header     []cellSpan
	headerLine span
	delimLine  span // the alignment row
	paraEnd    int  // end of the paragraph's last line's content
	estimate   int  // lines after the alignment row, to size the row slabs
}

// lineRun is a run of consecutive lines: the start of the first, the end of
// the last one's content.
type lineRun struct{ start, end int }

type tableFinder struct{}

func (tableFinder) Transform(p *ast.Paragraph, reader text.Reader, pc parser.Context) {
	pl := newParaLines(p, reader, pc)
	if p.Parent() != nil && p.Parent().Kind() == ast.KindDocument {
		// Lines are read one by one: a 10,000-row table is found at its
		// second line, and its rows are never listed here (scanRows reads
		// them from the source).
		prev, ok := pl.next()
		for ok {
			var l span
			if l, ok = pl.next(); !ok {
				break
			}
			ncols, delim := delimiterColumns(pl.src[l.start:l.end])
			if !delim {
				prev = l
				continue
			}
			header := splitRow(pl.src, prev.start, prev.end, ncols)
			if len(header) != ncols {
				return // as in goldmark: not a table
			}
			end := pl.lastEnd()
			found, _ := pc.Get(foundTablesKey).([]foundTable)
			pc.Set(foundTablesKey, append(found, foundTable{header: header, headerLine: prev, delimLine: l, paraEnd: end,
				estimate: bytes.Count(pl.src[l.start:end], []byte{'\n'})}))
			p.Parent().RemoveChild(p.Parent(), p)
			return
		}
	}
	noteStrayRuns(pl.src, pl.all(), pc)
}

// paraLines reads the source lines of a paragraph in order, the runs cut by
// collapse put back.
type paraLines struct {
	segs        *text.Segments
	src         []byte
	col         *collapsed // nil when Parse cut nothing
	i           int        // next segment
	runAt, runE int        // next line and end of the run being read
}

func newParaLines(p *ast.Paragraph, reader text.Reader, pc parser.Context) *paraLines {
	pl := &paraLines{segs: p.Lines(), src: reader.Source()}
	if col, _ := pc.Get(collapsedKey).(*collapsed); col != nil {
		pl.col, pl.src = col, col.src
	}
	return pl
}

// segLine returns the line of segment i: its start and content end.
func (pl *paraLines) segLine(i int) (int, int) {
	off := pl.segs.At(i).Start
	if pl.col != nil {
		off = pl.col.toOrig(off)
	}
	s, e := lineBounds(pl.src, off)
	// goldmark also ends a line at a CR that no LF follows (and its segment
	// may start at such a CR): the line starts after it.
	if cr := bytes.LastIndexByte(pl.src[s:off], '\r'); cr >= 0 && pl.src[s+cr+1] != '\n' {
		s += cr + 1
	}
	for s < e && pl.src[s] == '\r' {
		s++
	}
	return s, e
}

func (pl *paraLines) next() (span, bool) {
	if pl.runAt < pl.runE {
		s, e := lineBounds(pl.src, pl.runAt)
		pl.runAt = nextLine(pl.src, pl.runAt)
		return span{s, e}, true
	}
	if pl.i >= pl.segs.Len() {
		return span{}, false
	}
	s, e := pl.segLine(pl.i)
	pl.i++
	if pl.col != nil {
		if end, ok := pl.col.runEnd(s); ok {
			pl.runAt, pl.runE = s, end
			return pl.next()
		}
	}
	if s == 0 && bytes.HasPrefix(pl.src, utf8BOM) {
		s = len(utf8BOM) // a BOM (Windows editors) is not part of the first cell
	}
	return span{s, e}, true
}

// lastEnd returns the content end of the paragraph's last line.
func (pl *paraLines) lastEnd() int {
	s, e := pl.segLine(pl.segs.Len() - 1)
	if pl.col != nil {
		if end, ok := pl.col.runEnd(s); ok {
			_, e = lineBounds(pl.src, end-1) // end-1 is the run's last LF
		}
	}
	return e
}

// all returns every line of the paragraph.
func (pl *paraLines) all() []span {
	pl.i, pl.runAt, pl.runE = 0, 0, 0
	lines := make([]span, 0, pl.segs.Len())
	for l, ok := pl.next(); ok; l, ok = pl.next() {
		lines = append(lines, l)
	}
	return lines
}

// noteStrayRuns remembers the runs of `|`-led lines of a paragraph that holds
// no table (no alignment row): rows that belong to no table, unless a
// continued row of a task table took them in (Parse decides).
func noteStrayRuns(src []byte, lines []span, pc parser.Context) {
	var runs []lineRun
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if _, ok := delimiterColumns(src[l.start:l.end]); ok {
			return
		}
		if !pipeLedAnyIndent(src[l.start:l.end]) {
			continue
		}
		if n := len(runs); n > 0 && i > 0 && runs[n-1].end == lines[i-1].end {
			runs[n-1].end = l.end
		} else {
			runs = append(runs, lineRun(l))
		}
	}
	if len(runs) > 0 {
		prev, _ := pc.Get(strayRunsKey).([]lineRun)
		pc.Set(strayRunsKey, append(prev, runs...))
	}
}

func pipeLedAnyIndent(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	return len(b) > 0 && b[0] == '|'
}

// lineBounds returns the start of the line holding off and the end of its content.
func lineBounds(src []byte, off int) (int, int) {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := off
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		end = off + i
	} else {
		end = len(src)
	}
	if end > start && src[end-1] == '\r' {
		end--
	}
	return start, end
}

// delimiterColumns recognizes a GFM alignment row and counts its columns.
func delimiterColumns(b []byte) (int, bool) {
	if w, _ := util.IndentWidth(b, 0); w > 3 {
		return 0, false
	}
	allDash := true
	for _, c := range b {
		if c != '-' {
			allDash = false
		}
		// goldmark (util.IsSpace) takes a '\r' inside a line for a space.
		if !(c == ' ' || c == '\t' || c == '\r' || c == '-' || c == '|' || c == ':') {
			return 0, false
		}
	}
	if allDash {
		return 0, false
	}
	cols := bytes.Split(b, []byte{'|'})
	if len(cols) > 0 && util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	for _, c := range cols {
		c = bytes.TrimSpace(c)
		c = bytes.TrimPrefix(c, []byte{':'})
		c = bytes.TrimSuffix(c, []byte{':'})
		if len(c) == 0 || len(bytes.Trim(c, "-")) > 0 {
			return 0, false
		}
	}
	return len(cols), len(cols) > 0 // a line holding only `|` is no delimiter row
}
