package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// The older matrix format, written by hand before task tables had IDs: legend
// tables, then one table per priority section headed
//
//	| Item | Priority | Difficulty | Backlog | Description |
//
// with no ID or Status column; an item is done when a marker says so (✅,
// [x], ~~struck through~~, DONE). This file recognizes such tables and reads
// their items; migrate.go turns them into one task table.

// ErrNoTaskTable is what a task operation returns, wrapped in a
// *NoTaskTableError, when the matrix has no task table to read or write.
var ErrNoTaskTable = errors.New("the matrix has no task table")

// NoTaskTableError says the matrix has no task table and, when the file is in
// the older Item format, how many items it holds. It matches ErrNoTaskTable
// and ErrRefused with errors.Is.
type NoTaskTableError struct {
	// ItemTables and Items count the older-format Item tables and their
	// items; both 0 when the file has none.
	ItemTables, Items int
}

// migrateAdvice is how the CLI converts an older-format file.
const migrateAdvice = "run `agentinfra migrate --dry-run` to see the conversion, then `agentinfra migrate`"

// Error is Explain with the CLI's advice and, when there is nothing to
// convert, the header to copy on the lines after it.
func (e *NoTaskTableError) Error() string {
	msg := e.Explain(migrateAdvice)
	if e.ItemTables == 0 {
		msg += ":\n" + strings.TrimSuffix(CanonicalHeader, "\n")
	}
	return msg
}

// Explain says in one line what is missing and what to do, with convert
// saying how to run the conversion of an older-format file, so that an
// adapter that cannot run commands (MCP) can say it its own way.
func (e *NoTaskTableError) Explain(convert string) string {
	msg := "the matrix has no task table (a table whose header has ID and Status columns)"
	if e.ItemTables > 0 {
		return msg + fmt.Sprintf("; it looks like the older format, %d items in %d `| Item | Priority | ... |` %s with no ID or Status column: to convert %s into one task table, %s",
			e.Items, e.ItemTables, mdtext.Plural(e.ItemTables, "table", "tables"), mdtext.Plural(e.ItemTables, "it", "them"), convert)
	}
	return msg + "; add one, e.g. at the end of the file, with the header " + strings.Join(CanonicalColumns, " | ") + " and its alignment row"
}

// Unwrap lets errors.Is match ErrNoTaskTable and ErrRefused.
func (e *NoTaskTableError) Unwrap() []error { return []error{ErrNoTaskTable, ErrRefused} }

// RequireTaskTable returns nil when d has a task table, else a
// *NoTaskTableError that counts the older-format items d holds.
func (d *Doc) RequireTaskTable() error {
	if d.HasTaskTable() {
		return nil
	}
	e := &NoTaskTableError{}
	for _, it := range d.itemTables() {
		if !it.headerless {
			e.ItemTables++
		}
		e.Items += it.items()
	}
	return e
}

// Kinds of column in an Item table.
const (
	itemCol = iota + 1
	itemPriority
	itemDifficulty
	itemDescription
	itemStatus
	itemExtra // Backlog, Notes, ...: kept when it holds more than markers
)

func itemColumnKind(header string) int {
	switch strings.ToLower(cleanValue(header)) {
	case "item", "items":
		return itemCol
	case "priority", "pri", "prio":
		return itemPriority
	case "difficulty", "diff", "size", "effort", "complexity":
		return itemDifficulty
	case "description", "desc", "details":
		return itemDescription
	case "status", "state":
		return itemStatus
	}
	return itemExtra
}

// itemTable is an older-format table: an Item column, at least one other
// column this format uses, and neither an ID nor (with it) a Status column.
// People also leave a blank line between the header and the rows, or write
// a section's rows with no header at all: such `|`-led lines, which belong to
// no table, are read as a headerless itemTable with the columns of the
// nearest Item table above them of the same width.
type itemTable struct {
	tbl   *table
	start int // start of the header line (headerless: of the first row)
	end   int // end of the last line's content
	kinds []int
	rows  []itemRow
	// headerless is true for rows read with the header of tbl.
	headerless bool
}

type itemRow struct {
	line  int
	cells []string // raw text, trimmed; escapes (`\|`) kept
	extra int      // cells beyond the header's count
}

func (it *itemTable) items() int {
	n := 0
	for _, r := range it.rows {
		if !r.blank() && !placeholderRow(it, r) {
			n++
		}
	}
	return n
}

func (r itemRow) blank() bool {
	for _, c := range r.cells {
		if c != "" {
			return false
		}
	}
	return true
}

// itemTables returns the older-format tables of d in file order, the
// headerless ones included (see itemTable).
func (d *Doc) itemTables() []*itemTable {
	tables, _ := d.itemTablesAndLeftOut()
	return tables
}

// itemTablesAndLeftOut is itemTables, and the runs of item-shaped lines
// (`|`-led, two cells or more, after the first Item table's header) that no
// Item table gives columns to, as first and last line numbers: a migration
// would leave them out.
func (d *Doc) itemTablesAndLeftOut() ([]*itemTable, [][2]int) {
	out := d.headedItemTables()
	if len(out) == 0 || len(d.strays) == 0 {
		return out, nil
	}
	var leftOut [][2]int
	starts := lineStarts(d.src)
	headed := len(out)
	for _, run := range d.strays {
		first, last := run[0], run[1]
		start := starts[first-1]
		if start < out[0].start {
			continue // before any Item table: not this format's rows
		}
		var rows []itemRow
		width := -1
		for line := first; line <= last; line++ {
			ls, le, _ := lineAt(d.src, starts[line-1])
			r := itemRow{line: line}
			for _, c := range appendCells(nil, d.src, ls, le) {
				r.cells = append(r.cells, d.str[c.text.start:c.text.end])
			}
			if len(r.cells) < 2 {
				rows = nil
				break
			}
			if width < 0 || len(r.cells) > width {
				width = len(r.cells)
			}
			rows = append(rows, r)
		}
		if len(rows) == 0 {
			continue
		}
		// The nearest Item table above with as many columns gives them.
		var from *itemTable
		for _, it := range out[:headed] {
			if it.start < start && len(it.tbl.cols) == len(rows[0].cells) {
				from = it
			}
		}
		if from == nil {
			leftOut = append(leftOut, run)
			continue
		}
		_, end, _ := lineAt(d.src, starts[last-1])
		it := &itemTable{tbl: from.tbl, start: start, end: end, kinds: from.kinds, headerless: true}
		for _, r := range rows {
			if len(r.cells) > len(from.tbl.cols) {
				r.extra = len(r.cells) - len(from.tbl.cols)
			}
			for len(r.cells) < len(from.tbl.cols) {
				r.cells = append(r.cells, "")
			}
			it.rows = append(it.rows, r)
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b *itemTable) int { return a.start - b.start })
	return out, leftOut
}

// headedItemTables returns the Item tables of d that have their own header.
func (d *Doc) headedItemTables() []*itemTable {
	var out []*itemTable
	for _, t := range d.tables {
		if t.isTask {
			continue
		}
		if _, hasID := t.colIndex[ColID]; hasID {
			continue // a task table missing its Status: validate reports it
		}
		kinds := make([]int, len(t.cols))
		hasItem, known := false, false
		taken := map[int]bool{}
		for i, c := range t.cols {
			kinds[i] = itemColumnKind(c.name)
			if kinds[i] != itemExtra && taken[kinds[i]] {
				kinds[i] = itemExtra // a second Description (say): kept whole as an extra column
			}
			taken[kinds[i]] = true
			hasItem = hasItem || kinds[i] == itemCol
			known = known || kinds[i] == itemPriority || kinds[i] == itemDifficulty || kinds[i] == itemDescription ||
				strings.EqualFold(cleanValue(c.name), "backlog")
		}
		if !hasItem || !known {
			continue
		}
		it := &itemTable{tbl: t, start: t.header.start, end: t.lastEnd, kinds: kinds}
		// The table's lines are consecutive: header, alignment row, rows.
		lines := d.linesIn(t.header.start, t.lastEnd)
		for i, l := range lines {
			if i < 2 {
				continue
			}
			r := itemRow{line: t.headerLine + i}
			for _, c := range appendCells(nil, d.src, l.start, l.end) {
				r.cells = append(r.cells, d.str[c.text.start:c.text.end])
			}
			if len(r.cells) > len(t.cols) {
				r.extra = len(r.cells) - len(t.cols)
			}
			for len(r.cells) < len(t.cols) {
				r.cells = append(r.cells, "") // GFM pads a short row with empty cells
			}
			it.rows = append(it.rows, r)
		}
		out = append(out, it)
	}
	return out
}

// linesIn returns the content spans (without line endings) of the lines
// from the one starting at start to the one ending at end.
func (d *Doc) linesIn(start, end int) []span {
	var out []span
	for off := start; off <= end; {
		e := end
		if i := bytes.IndexByte(d.src[off:end], '\n'); i >= 0 {
			e = off + i
		}
		next := e + 1
		if e > off && d.src[e-1] == '\r' {
			e--
		}
		out = append(out, span{off, e})
		if next > end {
			break
		}
		off = next
	}
	return out
}

// heading is an ATX or setext heading of the file.
type heading struct {
	off   int
	text  string
	level int // 1-6 (setext: 1 for =, 2 for -)
}

// sectionOf returns the headings a position is under, nearest first: the
// heading above it, then the nearest heading above that one of a higher
// level, and so on up to the top level ("### Feature Enhancements" under
// "## P2 — Important").
func sectionOf(heads []heading, off int) []heading {
	var chain []heading
	level := 7
	for i := len(heads) - 1; i >= 0; i-- {
		h := heads[i]
		if h.off >= off || h.level >= level {
			continue
		}
		chain = append(chain, h)
		level = h.level
		if level == 1 {
			break
		}
	}
	return chain
}

// headings returns the file's headings outside code fences, in order.
func (d *Doc) headings() []heading {
	var out []heading
	fence := ""
	prev := span{-1, -1}
	for _, l := range d.linesIn(0, len(d.src)) {
		line := d.str[l.start:l.end]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence != "" {
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			prev = span{-1, -1}
			continue
		}
		if indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
			fence = strings.Repeat(trimmed[:1], n)
			continue
		}
		switch {
		case indent < 4 && strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			rest := trimmed[level:]
			if level <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "#"))
				out = append(out, heading{off: l.start, text: text, level: level})
			}
		case indent < 4 && prev.start >= 0 && strings.Trim(trimmed, "= \t") == "" && strings.Contains(trimmed, "="):
			out = append(out, heading{off: prev.start, text: strings.TrimSpace(d.str[prev.start:prev.end]), level: 1})
		}
		prev = l
		if strings.TrimSpace(line) == "" {
			prev = span{-1, -1}
		}
	}
	return out
}

// legends returns the key → meaning maps of the file's legend tables for
// difficulty (first column Size, Difficulty, Effort, ...) and priority
// (first column Priority or Pri). Keys are lower-cased.
func (d *Doc) legends() (difficulty, priority map[string]string) {
	difficulty, priority = map[string]string{}, map[string]string{}
	for _, t := range d.tables {
		if t.isTask || len(t.cols) < 2 {
			continue
		}
		var into map[string]string
		switch itemColumnKind(t.cols[0].name) {
		case itemDifficulty:
			into = difficulty
		case itemPriority:
			into = priority
		default:
			continue
		}
		if slices.ContainsFunc(t.cols, func(c column) bool { return itemColumnKind(c.name) == itemCol }) {
			continue // an Item table, not a legend
		}
		meaning := 1
		for i, c := range t.cols {
			switch strings.ToLower(cleanValue(c.name)) {
			case "meaning", "means", "description", "definition", "estimate", "time", "duration":
				if i > 0 {
					meaning = i
				}
			}
		}
		for i, l := range d.linesIn(t.header.start, t.lastEnd) {
			if i < 2 {
				continue
			}
			cells := appendCells(nil, d.src, l.start, l.end)
			if len(cells) <= meaning {
				continue
			}
			key := strings.ToLower(cleanValue(d.str[cells[0].text.start:cells[0].text.end]))
			if key != "" {
				into[key] = d.str[cells[meaning].text.start:cells[meaning].text.end]
			}
		}
	}
	return difficulty, priority
}

// cleanValue trims a cell and the emphasis or code marks around its value.
func cleanValue(s string) string {
	s = strings.TrimSpace(s)
	for {
		n := len(s)
		for _, m := range []string{"**", "__", "`", "*", "_"} {
			if len(s) > 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) {
				s = strings.TrimSpace(s[len(m) : len(s)-len(m)])
			}
		}
		if len(s) == n {
			return s
		}
	}
}

// emptyValue reports whether a Priority or Difficulty cell says "unknown".
func emptyValue(v string) bool {
	switch strings.ToLower(v) {
	case "", "-", "—", "–", "?", "tbd", "n/a", "na", "none", "unknown":
		return true
	}
	return false
}

// statusLegend returns the markers the file defines, in a legend table (a
// row "| ✅ | Complete |") or a line of prose ("Legend: ✅ = complete, 🚧 =
// in progress"), mapped to what they mean: done, in progress or to do.
// Markers are runs of symbols (emoji), never letters.
func (d *Doc) statusLegend() map[string]markerState {
	out := map[string]markerState{}
	add := func(glyph, meaning string) {
		if m := statusWords(meaning); m != noMarker && glyph != "" {
			out[glyph] = m
		}
	}
	for _, t := range d.tables {
		if t.isTask || len(t.cols) < 2 {
			continue
		}
		for i, l := range d.linesIn(t.header.start, t.lastEnd) {
			if i == 1 {
				continue // the alignment row
			}
			cells := appendCells(nil, d.src, l.start, l.end)
			if len(cells) < 2 {
				continue
			}
			if g := symbolRun(cleanValue(d.str[cells[0].text.start:cells[0].text.end])); g != "" {
				add(g, d.str[cells[1].text.start:cells[1].text.end])
			}
		}
	}
	// Prose: a symbol run, a separator, then the words that say what it is.
	inTable := func(off int) bool {
		for _, t := range d.tables {
			if off >= t.header.start && off <= t.lastEnd {
				return true
			}
		}
		return false
	}
	fence := ""
	for _, l := range d.linesIn(0, len(d.src)) {
		line := d.str[l.start:l.end]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			if fence == "" {
				fence = trimmed[:3]
			} else if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if fence != "" || inTable(l.start) || strings.HasPrefix(trimmed, "|") {
			continue
		}
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRuneInString(line[i:])
			if !isGlyph(r) {
				i += n
				continue
			}
			g := symbolRun(line[i:])
			rest := strings.TrimLeft(line[i+len(g):], " \t")
			sep := false
			for _, s := range []string{"=", ":", "–", "—", "→", "-"} {
				if strings.HasPrefix(rest, s) {
					rest, sep = strings.TrimLeft(rest[len(s):], " \t"), true
					break
				}
			}
			if sep {
				// The meaning ends at the next marker or list separator:
				// "✅ = complete · 🚧 = in progress".
				end := strings.IndexFunc(rest, func(r rune) bool { return isGlyph(r) || strings.ContainsRune(",;|()·•/", r) })
				if end < 0 {
					end = len(rest)
				}
				add(g, rest[:end])
			}
			i += len(g)
		}
	}
	return out
}

// statusWords reads what a legend says a marker means.
func statusWords(meaning string) markerState {
	l := strings.ToLower(strings.TrimSpace(meaning))
	switch {
	case l == "":
		return noMarker
	case strings.HasPrefix(l, "not ") || firstWordMatch(l, []string{"todo"}, []string{"todo", "planned", "pending", "open", "backlog", "unstarted"}) != "":
		return markedTodo
	case firstWordMatch(l, []string{"wip"}, []string{"wip", "ongoing", "started", "working", "progress", "doing"}) != "":
		return markedInProgress
	case firstWordMatch(l, []string{"done"}, []string{"done", "complete", "completed", "finished", "shipped", "fixed", "resolved", "closed"}) != "":
		return markedDone
	}
	return noMarker
}

// isGlyph reports whether r can be part of a marker: a symbol (emoji, ✅,
// ⬜) or the joiners and variation selectors emoji are written with.
func isGlyph(r rune) bool {
	return unicode.IsSymbol(r) && r > 0x7f || r == 0xFE0F || r == 0x200D
}

// symbolRun returns the run of glyphs s starts with ("" when none).
func symbolRun(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isGlyph(r) {
			break
		}
		i += n
	}
	return s[:i]
}
