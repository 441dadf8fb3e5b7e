package matrix

import (
	"bytes"
	"math"
	"strings"
)

// Select returns what q.Apply(Parse(src).Tasks()) returns — the same tasks,
// in the same order, with the same Line numbers — faster on a large matrix:
// with a Status, Priority, Mode, Agent, Skill or Text filter, the complete
// rows of well-formed task tables that cannot match are dropped from the
// source before it is parsed. Only rows that cannot change how anything else
// parses are dropped: `|`-led, `|`-closed rows with exactly one cell per
// column, in tables that start a paragraph and whose every row is like that,
// in a file where no task table has a row that could go on over the lines
// after it.
func (q Query) Select(src []byte) []Task { return q.SelectWith(src, nil) }

// SelectWith is Select for a matrix with its own vocabulary (nil: the default).
func (q Query) SelectWith(src []byte, v *Vocabulary) []Task {
	tasks, _ := q.SelectWithProblems(src, v)
	return tasks
}

// SelectWithProblems is SelectWith that also returns ParseWith(src,
// v).ReadProblems(): what the read could not return as data. Dropped rows
// are never a problem.
func (q Query) SelectWithProblems(src []byte, v *Vocabulary) ([]Task, []Diagnostic) {
	n := q.lenientWith(v)
	if q.Ready || n.ID == "" && len(n.Status) == 0 && len(n.Priority) == 0 && n.Mode == "" && n.Agent == "" && n.Skill == "" && n.Text == "" {
		d := ParseWith(src, v)
		return q.applyWith(d.Tasks(), v), d.ReadProblems()
	}
	reduced, lineOf, dropped := n.reduce(src, v)
	if dropped == 0 {
		d := ParseWith(src, v)
		tasks := d.Tasks()
		return q.filterWith(tasks, tasks[:0], v), d.ReadProblems()
	}
	d := ParseWith(reduced, v)
	if len(d.problems) > 0 {
		// Rare, and their messages name lines: read them in the source.
		d = ParseWith(src, v)
		tasks := d.Tasks()
		return q.filterWith(tasks, tasks[:0], v), d.ReadProblems()
	}
	tasks := d.Tasks()
	for i := range tasks {
		tasks[i].Line = lineOf[tasks[i].Line-1]
		if tasks[i].EndLine > 0 {
			tasks[i].EndLine = lineOf[tasks[i].EndLine-1]
		}
	}
	return q.filterWith(tasks, tasks[:0], v), nil // tasks is ours: filter in place
}

type srcLine struct{ start, end, next int } // content [start,end) without EOL; next line's start

// srcLines are the lines of a source, by their starts only (4 bytes a line,
// not 24: the pre-filter lists every line of a large matrix).
type srcLines struct {
	src    []byte
	starts []int32
}

func (ls srcLines) len() int { return len(ls.starts) }

func (ls srcLines) at(i int) srcLine {
	start, next := int(ls.starts[i]), len(ls.src)
	if i+1 < len(ls.starts) {
		next = int(ls.starts[i+1])
	}
	end := next
	if end > start && ls.src[end-1] == '\n' {
		end--
	}
	if end > start && ls.src[end-1] == '\r' {
		end--
	}
	return srcLine{start, end, next}
}

func lineText(src []byte, l srcLine) []byte { return src[l.start:l.end] }

// reduce drops the rows that cannot match n (already lenient) and returns the
// remaining source, the original 1-based line number of each remaining line,
// and how many lines were dropped.
func (n Query) reduce(src []byte, v *Vocabulary) ([]byte, []int, int) {
	if hasLoneCR(src) || len(src) > math.MaxInt32 {
		return src, nil, 0 // a lone CR ends a Markdown line: leave such files to Parse
	}
	lines := srcLines{src: src, starts: make([]int32, 0, bytes.Count(src, []byte{'\n'})+1)}
	for off := 0; off < len(src); off = nextLine(src, off) {
		lines.starts = append(lines.starts, int32(off))
	}
	drop := make([]bool, lines.len())
	dropped := 0
	d := &Doc{src: src, str: bytesToString(src), vocab: v}
	var cells []cellSpan
	for i := 0; i+1 < lines.len(); i++ {
		l := lines.at(i)
		if !pipeLedAnyIndent(src[l.start:l.end]) {
			continue
		}
		delim := lines.at(i + 1)
		ncols, ok := delimiterColumns(src[delim.start:delim.end])
		if !ok {
			continue
		}
		header := appendCells(nil, src, l.start, l.end)
		if len(header) != ncols {
			continue
		}
		// The table's rows: the `|`-led lines after the alignment row.
		j := i + 2
		for j < lines.len() && pipeLed(lineText(src, lines.at(j))) {
			j++
		}
		tbl := &table{colIndex: map[string]int{}}
		for _, c := range header {
			name := strings.TrimSpace(unescapeCell(d.str[c.text.start:c.text.end]))
			col := column{name: name, canonical: CanonicalColumn(name)}
			if _, dup := tbl.colIndex[col.canonical]; col.canonical != "" && !dup {
				tbl.colIndex[col.canonical] = len(tbl.cols)
			}
			tbl.cols = append(tbl.cols, col)
		}
		_, hasID := tbl.colIndex[ColID]
		_, hasStatus := tbl.colIndex[ColStatus]
		if !hasID || !hasStatus {
			i = j - 1
			continue
		}
		// Without an agent, skill or text filter only a few leading cells
		// are read: regularRow finds just those in most rows.
		need := -1
		if n.Agent == "" && n.Skill == "" && n.Text == "" {
			need = 0
			for col, used := range map[string]bool{ColID: n.ID != "", ColStatus: len(n.Status) > 0, ColPri: len(n.Priority) > 0, ColMode: n.Mode != ""} {
				if k, ok := tbl.colIndex[col]; ok && used {
					need = max(need, k+1)
				}
			}
		}
		// Only a table that starts a paragraph keeps its place when rows
		// go (known now; any reason below to drop nothing returns).
		canDrop := i == 0 || isBlankLine(lineText(src, lines.at(i-1)))
		rowTable := *tbl // holds each row's cells in turn (rowMayMatch)
		for k := i + 2; k < j; k++ {
			l := lines.at(k)
			var regular bool
			if need >= 0 {
				cells, regular = regularRow(cells[:0], src, l.start, l.end, ncols, need)
			}
			if !regular {
				cells = appendCells(cells[:0], src, l.start, l.end)
			}
			if !regular && len(cells) != ncols || !d.closesWithPipe(span{l.start, l.end}) {
				// A short or long row, or one without its closing pipe, may
				// go on over the lines after it, past blank lines and into
				// what looks like other tables here: drop nothing.
				return src, nil, 0
			}
			if canDrop && !n.rowMayMatch(d, &rowTable, span{l.start, l.end}, cells) {
				drop[k] = true
				dropped++
			}
		}
		if j < lines.len() && !isBlankLine(lineText(src, lines.at(j))) && !headingLine(lineText(src, lines.at(j))) {
			// A line of the table's paragraph that is not `|`-led is a row
			// of its own, which may go on over the lines after it.
			return src, nil, 0
		}
		i = j - 1
	}
	if dropped == 0 {
		return src, nil, 0
	}
	size := 0
	for i := range lines.len() {
		if !drop[i] {
			l := lines.at(i)
			size += l.next - l.start
		}
	}
	out := make([]byte, 0, size)
	lineOf := make([]int, 0, lines.len()-dropped)
	for i := range lines.len() {
		if !drop[i] {
			l := lines.at(i)
			out = append(out, src[l.start:l.next]...)
			lineOf = append(lineOf, i+1)
		}
	}
	return out, lineOf, dropped
}

// regularRow reports whether the line [s, e) has its outer pipes, exactly
// ncols cells and no backslash (so no escaped pipe), in two quick passes
// over it; if so, it appends the line's first n cells to dst as appendCells
// would. false says nothing about the line: split it with appendCells.
func regularRow(dst []cellSpan, src []byte, s, e, ncols, n int) ([]cellSpan, bool) {
	for s < e && isSpace(src[s]) {
		s++
	}
	for e > s && isSpace(src[e-1]) {
		e--
	}
	if e-s < 3 || src[s] != '|' || src[e-1] != '|' || bytes.IndexByte(src[s:e], '\\') >= 0 {
		return dst, false
	}
	// The cells are between the outer pipes: one more than the pipes
	// between them, unless the last of those ends the inner text.
	cells := bytes.Count(src[s+1:e-1], []byte{'|'})
	if src[e-2] != '|' {
		cells++
	}
	if cells != ncols || n > ncols {
		return dst, false
	}
	pos := s + 1
	for range n {
		c := pos + bytes.IndexByte(src[pos:e], '|')
		dst = append(dst, makeCell(src, pos, c))
		pos = c + 1
	}
	return dst, true
}

// rowMayMatch reports whether the row could be selected. Status, priority
// and mode are read from their cells the way Doc.taskOf reads them; other
// filters build the row's Task, with the row's cells as tbl's slab: tbl is
// a copy of the table that the caller keeps for this.
func (n Query) rowMayMatch(d *Doc, tbl *table, line span, cells []cellSpan) bool {
	cell := func(col string) (string, bool) {
		i, ok := tbl.colIndex[col]
		if !ok || i >= len(cells) {
			return "", false
		}
		return unescapeCell(d.str[cells[i].text.start:cells[i].text.end]), true
	}
	if n.ID != "" {
		if v, ok := cell(ColID); ok && v != n.ID {
			return false
		}
	}
	if len(n.Status) > 0 {
		if v, ok := cell(ColStatus); ok && !containsFoldList(n.Status, d.normalizedOr(ColStatus, v)) {
			return false
		}
	}
	if len(n.Priority) > 0 {
		if v, ok := cell(ColPri); ok && !containsFoldList(n.Priority, d.normalizedOr(ColPri, blankDash(v))) {
			return false
		}
	}
	if n.Mode != "" {
		if v, ok := cell(ColMode); ok && !strings.EqualFold(n.Mode, blankDash(v)) {
			return false
		}
	}
	if n.Agent == "" && n.Skill == "" && n.Text == "" {
		return true
	}
	tbl.slab = cells // a row's cells are in its table's slab; tbl is the caller's copy
	return n.match(d.taskOf(&row{tbl: tbl, span: narrow(line), nc: int32(len(cells))}))
}

// pipeLed reports whether a line is up to three spaces and then '|': a line
// that can only continue a paragraph, never start or end another block.
func pipeLed(b []byte) bool {
	for i := 0; i < len(b) && i < 4; i++ {
		switch b[i] {
		case '|':
			return true
		case ' ':
		default:
			return false
		}
	}
	return false
}

func isBlankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// hasLoneCR reports whether src holds a '\r' not followed by '\n'.
func hasLoneCR(src []byte) bool {
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\r')
		if i < 0 {
			return false
		}
		off += i + 1
		if off == len(src) || src[off] != '\n' {
			return true
		}
	}
}

// headingLine reports whether a line is an ATX heading, which ends a paragraph.
func headingLine(b []byte) bool {
	for i := 0; i < len(b) && i < 4; i++ {
		switch b[i] {
		case '#':
			return true
		case ' ':
		default:
			return false
		}
	}
	return false
}
