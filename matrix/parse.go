package matrix

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

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
	lines    *lineIndex
	vocab    *Vocabulary // nil: the default vocabulary
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

// readTask checks r's values, reporting bad ones, and indexes it by ID. The
// Task itself is built only on demand (taskOf): validate never needs it.
func (d *Doc) readTask(r *row) {
	t := r.tbl
	vocab := d.vocab.orDefault()
	cells := r.cells()
	for i, k := range t.kindsOf() {
		if i >= len(cells) {
			break
		}
		if k < kindID {
			continue // free text: nothing to check
		}
		c := cells[i]
		// No unescaping: a `\|` makes these values invalid either way.
		v := d.str[c.text.start:c.text.end]
		if k == kindID {
			r.id = v
		}
		// Nearly every value is valid in a plain way: a valid ID, a
		// canonical value written as the vocabulary spells it, an empty or
		// dash cell where that is allowed, a YYYY-MM-DD date. Those skip the
		// vocabulary's normalization; anything else is checked in full.
		var plain bool
		switch k {
		case kindID:
			plain = ValidID(v)
		case kindStatus:
			plain = inList(vocab.statuses, v)
		case kindPri:
			plain = v == "" || isEmptyMark(v) || inList(vocab.priorities, v)
		case kindDiff:
			plain = v == "" || isEmptyMark(v) || inList(vocab.difficulties, v)
		default: // kindCreated, kindUpdated
			plain = v == "" || isEmptyMark(v) || validDate(v)
		}
		if plain {
			continue
		}
		if msg := d.checkValue(t.cols[i].canonical, v); msg != "" {
			d.rowError(r, int(c.text.start), "%s", msg)
		}
	}
	first, h := -1, uint64(0)
	if r.id != "" {
		first, h = d.ids.first(d.rows, r.id)
	}
	d.rows = append(d.rows, r)
	switch {
	case r.id == "":
	case first < 0:
		d.ids.add(d.rows, len(d.rows)-1, h)
	default:
		prev := d.rows[first]
		d.rowError(r, int(r.cells()[r.tbl.colIndex[ColID]].text.start), "duplicate ID %s: also on line %d; give one of them a new ID", r.id, prev.line)
		prev.bad = true
		if d.ids.dups == nil {
			d.ids.dups = map[string][]*row{}
		}
		if _, ok := d.ids.dups[r.id]; !ok {
			d.ids.dups[r.id] = []*row{prev}
		}
		d.ids.dups[r.id] = append(d.ids.dups[r.id], r)
	}
}

// columnKind is a column's canonical name as a small number, for the loops
// over every cell of a matrix.
type columnKind uint8

const (
	kindExtra columnKind = iota
	kindMode
	kindSkills
	kindAgents
	kindDescription
	// readTask checks the values of these:
	kindID
	kindStatus
	kindPri
	kindDiff
	kindCreated
	kindUpdated
)

var kindOfColumn = map[string]columnKind{
	ColID: kindID, ColStatus: kindStatus, ColPri: kindPri, ColDiff: kindDiff, ColMode: kindMode, ColSkills: kindSkills,
	ColAgents: kindAgents, ColDescription: kindDescription, ColCreated: kindCreated, ColUpdated: kindUpdated,
}

func columnKinds(cols []column) []columnKind {
	kinds := make([]columnKind, len(cols))
	for i, c := range cols {
		kinds[i] = kindOfColumn[c.canonical] // kindExtra for ""
	}
	return kinds
}

// kindsOf returns t's column kinds, computing them for a table built
// without them.
func (t *table) kindsOf() []columnKind {
	if len(t.kinds) != len(t.cols) {
		t.kinds = columnKinds(t.cols)
	}
	return t.kinds
}

// inList reports whether s is one of list, exactly.
func inList(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkValue returns what is wrong with a value read from a canonical column.
// A dash ('-', '—') is an empty Pri, Diff, Created or Updated.
func (d *Doc) checkValue(col, v string) string {
	switch col {
	case ColID:
		if !ValidID(v) {
			return fmt.Sprintf("malformed ID %q: %s", v, idRule)
		}
	case ColStatus:
		if _, err := d.vocab.Status(v); err != nil {
			return fmt.Sprintf("unknown status %q; %s", v, d.vocab.orDefault().validList(ColStatus))
		}
	case ColPri, ColDiff:
		if v == "" || isEmptyMark(v) {
			return ""
		}
		if _, err := d.vocab.Normalize(col, v); err != nil {
			return fmt.Sprintf("unknown %s %q; %s", vocabNoun(col), v, d.vocab.orDefault().validList(col))
		}
	case ColCreated, ColUpdated:
		if v != "" && !isEmptyMark(v) && !validDateTime(v) {
			return fmt.Sprintf("bad %s date %q: write %s", col, v, acceptedDateForms)
		}
	}
	return ""
}

// taskOf builds the Task of a row, with values normalized where they are
// valid. A dash ('-', '—') reads as an empty cell, except in ID, Status and
// Description, where it is what was written.
func (d *Doc) taskOf(r *row) Task {
	t := Task{Skills: []string{}, Agents: []string{}, Line: int(r.line)}
	if r.endLine > r.line {
		t.EndLine = int(r.endLine)
	}
	// One look for a backslash in the row spares each cell its own.
	escapes := strings.IndexByte(d.str[r.span.start:r.span.end], '\\') >= 0
	cells := r.cells()
	for i, k := range r.tbl.kindsOf() {
		if i >= len(cells) {
			break
		}
		c := cells[i]
		v := d.str[c.text.start:c.text.end]
		if escapes {
			v = unescapeCell(v)
		}
		if t.EndLine > 0 && strings.IndexByte(v, '\r') >= 0 {
			v = strings.ReplaceAll(v, "\r\n", "\n") // a continued cell of a CRLF file
		}
		switch k {
		case kindID:
			t.ID = v
		case kindStatus:
			t.Status = d.normalizedOr(ColStatus, v)
		case kindPri:
			t.Priority = d.normalizedOr(ColPri, blankDash(v))
		case kindDiff:
			t.Difficulty = d.normalizedOr(ColDiff, blankDash(v))
		case kindMode:
			t.Mode = blankDash(v)
		case kindSkills:
			t.Skills = splitSkills(blankDash(v))
		case kindAgents:
			t.Agents = splitAgents(blankDash(v))
		case kindDescription:
			t.Description = v
		case kindCreated:
			t.Created = blankDash(v)
		case kindUpdated:
			t.Updated = blankDash(v)
		case kindExtra:
			if t.Extra == nil {
				t.Extra = map[string]string{}
			}
			t.Extra[r.tbl.cols[i].name] = blankDash(v)
		}
	}
	return t
}

// normalizedOr normalizes a value of col with the Doc's vocabulary, or
// returns it as written when it is not valid.
func (d *Doc) normalizedOr(col, v string) string {
	if v == "" {
		return ""
	}
	if n, err := d.vocab.Normalize(col, v); err == nil {
		return n
	}
	return v
}

func (d *Doc) rowError(r *row, off int, format string, a ...any) {
	r.bad = true
	d.errorAt(off, format, a...)
}

func (d *Doc) errorAt(off int, format string, a ...any) {
	d.diags = append(d.diags, d.diagAt(off, SeverityError, format, a...))
}

func (d *Doc) diagAt(off int, sev Severity, format string, a ...any) Diagnostic {
	line := d.lines.line(off)
	col := utf8.RuneCount(d.src[d.lines.lineStart(off):off]) + 1
	return Diagnostic{Line: line, Col: col, Severity: sev, Message: fmt.Sprintf(format, a...)}
}

// Tasks returns every task row in file order.
func (d *Doc) Tasks() []Task {
	out := make([]Task, len(d.rows))
	for i, r := range d.rows {
		out[i] = d.taskOf(r)
	}
	return out
}

// Task returns the task with the given ID (the first, if duplicated).
func (d *Doc) Task(id string) (Task, bool) {
	i, _ := d.ids.first(d.rows, id)
	if i < 0 {
		return Task{}, false
	}
	return d.taskOf(d.rows[i]), true
}

// IDs returns every task ID in file order.
func (d *Doc) IDs() []string {
	out := make([]string, 0, len(d.rows))
	for _, r := range d.rows {
		out = append(out, r.id)
	}
	return out
}

// Bytes returns the document's bytes; callers must not modify them.
func (d *Doc) Bytes() []byte { return d.src }

// Diagnostics returns the problems of the file itself, in line order.
func (d *Doc) Diagnostics() []Diagnostic {
	out := append([]Diagnostic{}, d.diags...)
	sortDiagnostics(out)
	return out
}

// HasTaskTable reports whether the file holds at least one task table.
func (d *Doc) HasTaskTable() bool {
	for _, t := range d.tables {
		if t.isTask {
			return true
		}
	}
	return false
}

// Columns returns the header names of the task tables, deduplicated, in order.
func (d *Doc) Columns() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range d.tables {
		if !t.isTask {
			continue
		}
		for _, c := range t.cols {
			key := strings.ToLower(c.name)
			if c.canonical != "" {
				key = strings.ToLower(c.canonical)
			}
			if !seen[key] {
				seen[key] = true
				name := c.name
				if c.canonical != "" {
					name = c.canonical
				}
				out = append(out, name)
			}
		}
	}
	return out
}

// rowWithID returns the first row holding id: a task row, else a row that
// could not be read whose ID cell holds it; nil if none.
func (d *Doc) rowWithID(id string) *row {
	if i, _ := d.ids.first(d.rows, id); i >= 0 {
		return d.rows[i]
	}
	return d.unread[id]
}

// opensWithPipe and closesWithPipe tell whether a table line has its outer pipes.
func (d *Doc) opensWithPipe(l span) bool {
	i := l.start
	for i < l.end && isSpace(d.src[i]) {
		i++
	}
	return i < l.end && d.src[i] == '|'
}

func (d *Doc) closesWithPipe(l span) bool {
	i := l.end
	for i > l.start && isSpace(d.src[i-1]) {
		i--
	}
	return i > l.start && d.src[i-1] == '|'
}
