package matrix

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Logical rows. People break a cell over several lines: a Description goes
// on with a list, a paragraph, blank lines, a fenced code block, even a
// heading, until a line such as `| 2026-01-20 | 2026-01-23 14:15:22 |` ends
// the row. goldmark ends the table's paragraph at the first of those lines, so
// the rows of a task table with outer pipes are read line by line from the
// source instead, past the paragraph when a row is still open:
//
//   - A row is complete on its line when the line ends with `|`, or when it
//     has all its cells and the next line is `|`-led, the end, or blank (GFM)
//     with no line ending in `|` after it before the next `|`-led line.
//   - A row with all its cells but no closing pipe goes on in its last cell
//     until a line ends with `|` (over blank lines when such a line follows)
//     or the next line is `|`-led.
//   - A row with fewer cells goes on in its last cell (blank lines, lists,
//     headings, fences included) until a line holds the missing cells at its
//     end: the row is anchored at both ends, so a stray `|` in the middle of a
//     long description shifts nothing. Lines inside a fence opened in the
//     continuation never end the row.
//   - A `|`-led line that is a complete row with a plausible ID, or the header
//     of a new table, starts something new: an open row before it never ended.
//   - With no row open, the table ends at a blank line or a line that is not
//     `|`-led (inside goldmark's own table paragraph, such a line is a row, as
//     in GFM).
//
// A continued row is a task, read whole, and an error for validate. A row
// with the wrong number of cells, or one that never ends, is unreadable: it is
// no task, and its problem is a read problem (ReadProblems).

// lineAt returns the content [s, e) of the line at off (without its line
// ending) and the start of the next line.
func lineAt(src []byte, off int) (s, e, next int) {
	e, next = len(src), len(src)
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		e, next = off+i, off+i+1
	}
	if e > off && src[e-1] == '\r' {
		e--
	}
	return off, e, next
}

// plausibleID reports whether s could be an ID someone wrote: letters, digits,
// '-' and '_', at most 32 characters. It decides where rows start, not whether
// an ID is valid (ValidID does).
func plausibleID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// fence tracks a fenced code block opened inside a continued cell.
type fence struct {
	char byte // '`' or '~'; 0 when no fence is open
	n    int  // length of the opening run
}

// feed updates the fence with one line; it reports whether the line opened
// or closed a fence, or lies inside one.
func (f *fence) feed(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	run := 0
	for run < len(t) && (t[run] == '`' || t[run] == '~') && t[run] == t[0] {
		run++
	}
	if f.char != 0 {
		if run >= f.n && t[0] == f.char && isBlankLine(t[run:]) {
			f.char = 0
		}
		return true
	}
	if run >= 3 && !(t[0] == '`' && bytes.IndexByte(t[run:], '`') >= 0) {
		f.char, f.n = t[0], run
		return true
	}
	return false
}

// closesBeforeCells reports whether line, inside the open fence, is its
// closing run followed by the row's last cells: people end a Description
// with "```  | 2026-01-21 | 2026-01-21 |". CommonMark closes no fence on a
// line with text after the run, but in a table cell the row ends there.
func (f *fence) closesBeforeCells(line []byte) bool {
	if f.char == 0 {
		return false
	}
	t := bytes.TrimLeft(line, " \t")
	run := 0
	for run < len(t) && t[run] == f.char {
		run++
	}
	rest := bytes.TrimLeft(t[run:], " \t")
	return run >= f.n && len(rest) > 0 && rest[0] == '|'
}

// rowScanner reads the logical rows of one task table.
type rowScanner struct {
	d       *Doc
	t       *table
	want    int
	limit   int // rows are read up to here: the source end, or the paragraph's end for tables without outer pipes
	paraEnd int // end of goldmark's table paragraph
	slab    []cellSpan
	rows    []row
	first   int // the slab index of the current row's first cell
	scratch []cellSpan
	// closerAt is the start of the line that closesAfterBlank found last.
	closerAt int
	// unclosed maps the first line of a row whose cell opened a code block
	// that never closes to the line (and offset) that opened it (rare: nil
	// otherwise).
	unclosed map[int32][2]int32
}

// scanRows reads the rows of t starting at off, the line after the alignment
// row (line number lineNo). estimate is the number of lines of goldmark's
// paragraph, to size the slabs once. It returns the end of the table: the end
// of its last line's content.
func (d *Doc) scanRows(t *table, off, lineNo, paraEnd, estimate, tableEnd int) int {
	s := &rowScanner{d: d, t: t, want: len(t.cols), limit: len(d.src), paraEnd: paraEnd}
	if !t.pipes {
		s.limit = paraEnd
	}
	// One allocation for all cells and one for all rows (unless the table
	// goes on past its paragraph): a large matrix is one table, and per-row
	// allocations dominate its parse otherwise.
	s.slab = make([]cellSpan, 0, estimate*s.want)
	s.rows = make([]row, 0, estimate)
	d.rows = slices.Grow(d.rows, estimate)
	d.ids.reserve(d.rows, len(d.rows)+estimate)
	src := d.src
	for off < s.limit {
		ls, le, next := lineAt(src, off)
		if isBlankLine(src[ls:le]) {
			break
		}
		if ls >= paraEnd && !d.opensWithPipe(span{ls, le}) {
			break
		}
		var stop bool
		off, lineNo, stop = s.row(ls, le, next, lineNo)
		r := &s.rows[len(s.rows)-1]
		// The row's cells are final now; a slab that grows later leaves
		// them where they are.
		r.c0, r.nc = int32(s.first), int32(len(s.slab)-s.first)
		tableEnd = int(r.span.end)
		if stop {
			break
		}
	}
	t.slab = s.slab
	t.rows = make([]*row, 0, len(s.rows))
	for i := range s.rows {
		r := &s.rows[i]
		t.rows = append(t.rows, r)
		s.finish(r)
	}
	if n := len(t.rows); n > 0 && t.rows[n-1].unreadable == neverEnds {
		t.brokenEnd = t.rows[n-1]
	}
	return tableEnd
}

const (
	wrongCount = 1 + iota
	neverEnds
)

// row reads the row starting on the line [ls, le) and returns where the
// next one may start; stop means the table ends after it.
func (s *rowScanner) row(ls, le, next, lineNo int) (int, int, bool) {
	d, src := s.d, s.d.src
	s.first = len(s.slab)
	first := s.first
	s.slab = appendCells(s.slab, src, ls, le)
	n := len(s.slab) - first
	s.rows = append(s.rows, row{tbl: s.t, line: int32(lineNo), endLine: int32(lineNo), span: span32{int32(ls), int32(le)}})
	r := &s.rows[len(s.rows)-1]
	off, lineNo := next, lineNo+1
	if d.closesWithPipe(span{ls, le}) || n >= s.want && (!s.t.pipes || s.endsBefore(off) && !s.closesAfterBlank(off)) {
		if n != s.want {
			r.unreadable = wrongCount
		}
		return off, lineNo, false
	}
	if n >= s.want {
		return s.lastCell(r, first+n-1, off, lineNo)
	}
	return s.midCell(r, first+n-1, off, lineNo)
}

// endsBefore reports whether the line at off cannot continue a row that has
// all its cells: it is blank, `|`-led or past the end.
func (s *rowScanner) endsBefore(off int) bool {
	if off >= s.limit {
		return true
	}
	ls, le, _ := lineAt(s.d.src, off)
	return isBlankLine(s.d.src[ls:le]) || s.t.pipes && s.d.opensWithPipe(span{ls, le})
}

// closesAfterBlank reports whether the line at off is blank and a later line
// ends with `|` before any `|`-led line (outside fences) or the end: the last
// cell of a row without its closing pipe then goes on over the blank lines,
// as a cell with a list or paragraphs does.
func (s *rowScanner) closesAfterBlank(off int) bool {
	src := s.d.src
	if off >= s.limit {
		return false
	}
	if ls, le, _ := lineAt(src, off); !isBlankLine(src[ls:le]) {
		return false
	}
	if off < s.closerAt {
		return true // found by the last look ahead (no quadratic scans)
	}
	var f fence
	for off < s.limit {
		ls, le, next := lineAt(src, off)
		off = next
		if f.char == 0 && s.d.opensWithPipe(span{ls, le}) {
			return false
		}
		if f.feed(src[ls:le]) {
			continue
		}
		if s.d.closesWithPipe(span{ls, le}) {
			s.closerAt = ls
			return true
		}
	}
	return false
}

// lastCell continues the last cell (slab[open]) of a row that has its cells
// but no closing pipe.
func (s *rowScanner) lastCell(r *row, open, off, lineNo int) (int, int, bool) {
	src := s.d.src
	startOff, startLine := off, lineNo
	fences := true
again:
	var f fence
	fenceLine, fenceOff := 0, 0
	for off < s.limit {
		ls, le, next := lineAt(src, off)
		if fences && f.closesBeforeCells(src[ls:le]) {
			f.char = 0
			r.span.end, r.endLine = int32(le), int32(lineNo)
			off, lineNo = next, lineNo+1
			break
		}
		wasOpen := f.char != 0
		inFence := fences && f.feed(src[ls:le])
		if !wasOpen && f.char != 0 {
			fenceLine, fenceOff = lineNo, ls
		}
		r.span.end, r.endLine = int32(le), int32(lineNo)
		off, lineNo = next, lineNo+1
		if f.char == 0 && (!inFence && s.d.closesWithPipe(span{ls, le}) || s.endsBefore(off) && !s.closesAfterBlank(off)) {
			break
		}
	}
	if f.char != 0 && off >= s.limit {
		// A code block opened in the cell never closes: as code it would
		// take every row after it. Read the cell again as text, so the rows
		// after it are rows, and say where the block opened.
		s.noteUnclosed(r, fenceLine, fenceOff)
		off, lineNo, fences = startOff, startLine, false
		goto again
	}
	end := int(r.span.end)
	if s.d.closesWithPipe(span{int(r.span.start), end}) {
		end = bytes.LastIndexByte(src[:end], '|')
	}
	s.slab[open] = multiCell(src, int(s.slab[open].text.start), end)
	if len(s.slab)-s.first != s.want {
		r.unreadable = wrongCount
	}
	return off, lineNo, false
}

// midCell continues a row with fewer cells than the header until a line ends
// it with the missing cells.
func (s *rowScanner) midCell(r *row, open, off, lineNo int) (int, int, bool) {
	d, src := s.d, s.d.src
	rowStart := s.first
	if k, ok := s.t.colIndex[ColDescription]; ok && rowStart+k < open && valueColumn(s.t.cols[open-rowStart].canonical) {
		// The open cell is a date or an enum, which holds no text that goes
		// on: a stray `|` in the description's first line shifted it. The
		// Description is the cell that goes on.
		open = rowStart + k
		s.slab = s.slab[:open+1]
	}
	need := s.want - (open - rowStart + 1)
	startOff, startLine, firstEnd, firstEndLine := off, lineNo, r.span.end, r.endLine
	fences := true
again:
	var f fence
	fenceLine, fenceOff := 0, 0
	r.span.end, r.endLine = firstEnd, firstEndLine
	lastText, lastTextLine := int(r.span.end), r.endLine
	for off < s.limit {
		ls, le, next := lineAt(src, off)
		if fences && f.closesBeforeCells(src[ls:le]) {
			if multiEnd, ok := s.closingCells(ls, le, need); ok {
				r.span.end, r.endLine = int32(le), int32(lineNo)
				s.slab[open] = multiCell(src, int(s.slab[open].text.start), multiEnd)
				return next, lineNo + 1, false
			}
		}
		if f.char == 0 && (s.t.pipes && d.opensWithPipe(span{ls, le}) || !s.t.pipes) {
			if s.startsRow(ls, le) {
				r.span.end, r.endLine = int32(lastText), lastTextLine
				r.unreadable, r.stoppedBy = neverEnds, int32(lineNo)
				if r.endLine == r.line {
					r.unreadable = wrongCount // a short row, followed by the next row
				}
				return off, lineNo, false
			}
			if s.startsTable(ls, le, next) {
				r.span.end, r.endLine = int32(lastText), lastTextLine
				r.unreadable, r.stoppedBy = neverEnds, int32(lineNo)
				return off, lineNo, true
			}
		}
		wasOpen := f.char != 0
		inFence := fences && f.feed(src[ls:le])
		if !wasOpen && f.char != 0 {
			fenceLine, fenceOff = lineNo, ls
		}
		r.span.end, r.endLine = int32(le), int32(lineNo)
		if !isBlankLine(src[ls:le]) {
			lastText, lastTextLine = le, int32(lineNo)
		}
		off, lineNo = next, lineNo+1
		if inFence {
			continue
		}
		if s.t.pipes && !d.closesWithPipe(span{ls, le}) && !s.endsBefore(off) {
			continue
		}
		if multiEnd, ok := s.closingCells(ls, le, need); ok {
			s.slab[open] = multiCell(src, int(s.slab[open].text.start), multiEnd)
			return off, lineNo, false
		}
	}
	if f.char != 0 {
		// A code block opened in the cell never closes: read the cell again
		// as text, so that the next row ends it, and say where the block
		// opened (that line, not the row's, is where the reader lost its way).
		s.noteUnclosed(r, fenceLine, fenceOff)
		off, lineNo, fences = startOff, startLine, false
		s.slab = s.slab[:open+1]
		goto again
	}
	r.span.end, r.endLine = int32(lastText), lastTextLine
	r.unreadable = neverEnds
	return off, lineNo, true
}

// noteUnclosed records that r's cell opened a code block at off (on line)
// that never closes.
func (s *rowScanner) noteUnclosed(r *row, line, off int) {
	if s.unclosed == nil {
		s.unclosed = map[int32][2]int32{}
	}
	s.unclosed[r.line] = [2]int32{int32(line), int32(off)}
}

// valueColumn reports whether a canonical column holds a short value (an
// ID, an enum, a date), never text that goes on over several lines.
func valueColumn(canonical string) bool {
	switch canonical {
	case ColID, ColStatus, ColPri, ColDiff, ColCreated, ColUpdated:
		return true
	}
	return false
}

// startsRow reports whether the line is a complete row of its own: exactly
// one cell per column and a plausible ID.
func (s *rowScanner) startsRow(ls, le int) bool {
	s.scratch = appendCells(s.scratch[:0], s.d.src, ls, le)
	if len(s.scratch) != s.want {
		return false
	}
	i, ok := s.t.colIndex[ColID]
	return ok && plausibleID(s.d.str[s.scratch[i].text.start:s.scratch[i].text.end])
}

// startsTable reports whether the line is the header of a new table: the
// next line is an alignment row with as many columns.
func (s *rowScanner) startsTable(ls, le, next int) bool {
	if next >= len(s.d.src) {
		return false
	}
	ds, de, _ := lineAt(s.d.src, next)
	ncols, ok := delimiterColumns(s.d.src[ds:de])
	if !ok {
		return false
	}
	s.scratch = appendCells(s.scratch[:0], s.d.src, ls, le)
	return len(s.scratch) == ncols
}

// closingCells appends the last need cells of the line [ls, le) to the slab
// when the line can end the row: it holds need cells after a pipe, and its
// date cells look like dates (so a Markdown table line inside a description
// does not end it). It returns where the continued cell ends.
func (s *rowScanner) closingCells(ls, le, need int) (int, bool) {
	src := s.d.src
	end := le
	for end > ls && isSpace(src[end-1]) {
		end--
	}
	if end > ls && src[end-1] == '|' {
		end--
	}
	pipes := make([]int, 0, 4)
	for i := end - 1; i >= ls && len(pipes) < need; i-- {
		if src[i] == '|' && (i == 0 || src[i-1] != '\\') {
			pipes = append(pipes, i)
		}
	}
	if len(pipes) < need {
		return 0, false
	}
	base := len(s.slab)
	for k := need - 1; k >= 0; k-- {
		cellEnd := end
		if k > 0 {
			cellEnd = pipes[k-1]
		}
		c := makeCell(src, pipes[k]+1, cellEnd)
		col := s.t.cols[s.want-1-k]
		if col.canonical == ColCreated || col.canonical == ColUpdated {
			if v := s.d.str[c.text.start:c.text.end]; !(v == "" || v == "-" || v == "—" || v[0] >= '0' && v[0] <= '9') {
				s.slab = s.slab[:base]
				return 0, false
			}
		}
		s.slab = append(s.slab, c)
	}
	return pipes[need-1], true
}

// multiCell is the cell [start, end) of a continued row: trimmed of white
// space and line breaks at both ends.
func multiCell(src []byte, start, end int) cellSpan {
	for start < end && (isSpace(src[start]) || src[start] == '\n' || src[start] == '\r') {
		start++
	}
	for end > start && (isSpace(src[end-1]) || src[end-1] == '\n' || src[end-1] == '\r') {
		end--
	}
	return cellSpan{text: span32{int32(start), int32(end)}}
}

// finish reports the row's problems and indexes it.
func (s *rowScanner) finish(r *row) {
	d := s.d
	if r.unreadable == 0 && r.endLine == r.line {
		d.readTask(r) // the common case: nothing to report here
		return
	}
	id := ""
	if i, ok := s.t.colIndex[ColID]; ok && i < len(r.cells()) {
		if v := d.str[r.cells()[i].text.start:r.cells()[i].text.end]; plausibleID(v) {
			id = v
		}
	}
	of := "row"
	if id != "" {
		of = "row of task " + id
	}
	switch r.unreadable {
	case wrongCount:
		where := ""
		if r.endLine > r.line {
			where = fmt.Sprintf(" (lines %d-%d)", r.line, r.endLine)
		}
		d.readProblem(r, id, d.diagAt(int(r.span.start), SeverityError,
			"%s%s has %d cells but the table header has %d, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column",
			of, where, len(r.cells()), s.want))
		return
	case neverEnds:
		before := "the end of the file"
		if r.stoppedBy > 0 {
			before = fmt.Sprintf("line %d", r.stoppedBy)
		}
		if fl := s.unclosed[r.line]; fl[0] > 0 {
			d.readProblem(r, id, d.diagAt(int(fl[1]), SeverityError,
				"%s starting at line %d never ends: the code block opened on line %d never closes (its closing fence must start a line), and no line before %s ends the row with its last cells (%s |), so it is not read; close the code block, then end the row with those cells",
				of, r.line, fl[0], before, s.tailColumns(len(r.cells()))))
			return
		}
		d.readProblem(r, id, d.diagAt(int(r.span.start), SeverityError,
			"%s starting at line %d never ends: no line before %s ends it with its last cells (%s |), so it is not read; end the row with those cells, or escape a | inside a cell as \\|",
			of, r.line, before, s.tailColumns(len(r.cells()))))
		return
	}
	if r.endLine > r.line {
		of = "row"
		if id != "" {
			of = "task " + id
		}
		r.bad = true
		unclosed := ""
		if fl := s.unclosed[r.line]; fl[0] > 0 {
			unclosed = fmt.Sprintf("; its code block opened on line %d never closes, so the cell was read as text", fl[0])
		}
		d.errorAt(nextLine(d.src, int(r.span.start)), "%s goes on over lines %d-%d (%d lines): a line break inside a cell%s; run `agentinfra validate --fix` to join it into one line",
			of, r.line, r.endLine, r.endLine-r.line+1, unclosed)
	}
	d.readTask(r)
}

// tailColumns names the columns after the first n cells.
func (s *rowScanner) tailColumns(n int) string {
	names := make([]string, 0, s.want)
	for _, c := range s.t.cols[min(n, s.want):] {
		names = append(names, c.name)
	}
	if len(names) == 0 {
		names = append(names, s.t.cols[s.want-1].name)
	}
	return "| " + strings.Join(names, " | ")
}
