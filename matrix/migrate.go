package matrix

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// Migration is what Migrate did (or, on a copy, would do).
type Migration struct {
	// Migrated is how many items became task rows; IDs are their new IDs,
	// in file order.
	Migrated int      `json:"migrated"`
	IDs      []string `json:"ids"`
	// TableLine is the header line of the new task table.
	TableLine int `json:"table_line"`
	// ItemTables are the header lines of the Item tables converted, in the
	// file as it was.
	ItemTables []int `json:"item_tables"`
	Done       int   `json:"done"`
	Todo       int   `json:"todo"`
	// Other counts the items in another status: a Status column's, or a
	// legend marker's (🚧 = in progress).
	Other int `json:"other"`
	// KeptColumns are the old columns carried over as extra columns because
	// they hold more than done markers (e.g. Backlog notes).
	KeptColumns []string `json:"kept_columns"`
	// NoPriority counts the items that got no priority: an empty Priority
	// cell under headings that name none.
	NoPriority int `json:"no_priority"`
	// Headerless counts the items read from rows with no header of their
	// own (below a blank line after it, or a section with none).
	Headerless int `json:"headerless"`
	// Placeholders are the lines of rows that hold no item ("(None
	// currently)", "None", "—"): not migrated.
	Placeholders []int `json:"placeholders"`
	// Merged are the items that repeat an earlier one (a "Quick
	// Reference" table): one task each, with what both say.
	Merged []MergedItem `json:"merged"`
	// AlreadyMigrated is true when the file has a task table and no Item
	// table: there was nothing to do.
	AlreadyMigrated bool `json:"already_migrated,omitempty"`
}

// MergedItem is an item row that repeats the item of an earlier row.
type MergedItem struct {
	Line int `json:"line"`
	Into int `json:"into"` // the line of the row it was merged into
}

// Migrate converts every Item table of d (see itemTables) into ONE task
// table with the canonical columns, written where the first Item table was;
// the other Item tables are removed, and every other byte of the file (prose,
// headings, legends) is kept. Each item gets a new ID, status DONE when a
// marker says so (else TODO), a priority from its cell or else its section
// heading, a difficulty through the legend, Description = Item — Description
// (done markers stripped, every other character kept), Created = Updated =
// today. Old columns that hold more than markers are kept as extra columns.
//
// Migrate refuses (ErrRefused, d unchanged) when d already has a task table,
// has no Item table, or holds a value it cannot map or a row it cannot split.
func (d *Doc) Migrate(now time.Time) (Migration, error) {
	tables, leftOut := d.itemTablesAndLeftOut()
	if d.HasTaskTable() {
		if len(tables) == 0 {
			// Migrated already (or never in the old format): not an error.
			return Migration{AlreadyMigrated: true, IDs: []string{}, KeptColumns: []string{}, Placeholders: []int{}, Merged: []MergedItem{},
				TableLine: d.firstTaskTable().headerLine}, nil
		}
		return Migration{}, refusedf("the matrix has a task table (line %d) and also %d older-format Item %s (line %d); migrate converts only a file with no task table, so nothing was written: move those items into the task table by hand (or the task table out, migrate, and merge)",
			d.firstTaskTable().headerLine, len(tables), mdtext.Plural(len(tables), "table", "tables"), tables[0].tbl.headerLine)
	}
	if len(tables) == 0 {
		return Migration{}, refusedf("migrate cannot convert this file: it has no task table and no older-format Item table (a table whose header has an Item column, e.g. | Item | Priority | Difficulty | Backlog | Description |); add a task table with this header instead:\n%s", strings.TrimSuffix(CanonicalHeader, "\n"))
	}
	if len(leftOut) > 0 {
		var where []string
		for _, r := range leftOut {
			where = append(where, lineRange(r[0], r[1]))
		}
		return Migration{}, refusedf("migrate would leave out the item rows on %s: they belong to no table, and no Item table above them has as many columns to read them with; nothing was written. Give them a header (a | Item | Priority | ... | line and a |---| row above them), or remove them, and run migrate again", strings.Join(where, ", "))
	}
	conv := converter{heads: d.headings(), seen: map[string]bool{}, keep: map[string]bool{}, statusLegend: d.statusLegend()}
	conv.diffLegend, conv.priLegend = d.legends()
	m := Migration{IDs: []string{}, KeptColumns: []string{}, Placeholders: []int{}, Merged: []MergedItem{}}
	var items []convertedItem
	for _, it := range tables {
		if !it.headerless {
			m.ItemTables = append(m.ItemTables, it.tbl.headerLine)
		}
		got := conv.table(it)
		if it.headerless {
			m.Headerless += len(got)
		}
		items = append(items, got...)
	}
	m.Placeholders = append(m.Placeholders, conv.placeholders...)
	items, m.Merged = mergeRepeated(items)
	if n := len(conv.problems); n > 0 {
		const show = 20
		shown, more := conv.problems, ""
		if n > show {
			shown, more = shown[:show], fmt.Sprintf("; and %d more", n-show)
		}
		return Migration{}, refusedf("migrate cannot read %d item value(s), so nothing was written: %s%s; fix those cells (or add a legend row that says what they mean) and run migrate again", n, strings.Join(shown, "; "), more)
	}
	kept := conv.keptColumns()
	cols := append([]string{}, CanonicalColumns...)
	for _, k := range kept {
		cols = append(cols, k.header)
		m.KeptColumns = append(m.KeptColumns, k.header)
	}
	used := map[string]bool{}
	today := Today(now)
	eol := tables[0].tbl.eol
	var b strings.Builder
	b.WriteString(tableLine(cols) + eol)
	b.WriteString("|")
	for _, c := range cols {
		b.WriteString(strings.Repeat("-", utf8.RuneCountInString(c)+2) + "|")
	}
	for _, c := range items {
		id, err := d.freshID(now, used)
		if err != nil {
			return Migration{}, err
		}
		m.IDs = append(m.IDs, id)
		vals := map[string]string{ColID: id, ColStatus: c.status, ColPri: c.pri, ColDiff: c.diff, ColDescription: c.desc, ColCreated: today, ColUpdated: today}
		cells := make([]string, 0, len(cols))
		for _, col := range CanonicalColumns {
			cells = append(cells, vals[col])
		}
		for _, k := range kept {
			cells = append(cells, c.extra[k.key])
		}
		b.WriteString(eol + tableLine(cells))
		switch c.status {
		case "DONE":
			m.Done++
		case "TODO":
			m.Todo++
		default:
			m.Other++
		}
		if c.pri == "" {
			m.NoPriority++
		}
	}
	m.Migrated = len(items)
	// The task table takes the place of the first Item table that is no
	// summary of the others (a "Quick Reference" table up top is not where
	// every task belongs).
	at := 0
	for i, it := range tables {
		if !it.headerless && !conv.summaryTable(it) {
			at = i
			break
		}
	}
	out := d.withoutTables(tables, at, b.String())
	nd := Parse(out)
	if got := len(nd.rows); !nd.HasTaskTable() || got != len(items) || countErrors(nd.diags) > countErrors(d.diags) {
		return Migration{}, refusedf("the converted table reads back as %d rows, not %d, or with errors; nothing was written (please report this with the file)", got, len(items))
	}
	m.TableLine = nd.firstTaskTable().headerLine
	*d = *nd
	return m, nil
}

// tableLine writes "| a | b |"; an empty cell is two spaces wide, as AddTask
// writes it.
func tableLine(cells []string) string { return "| " + strings.Join(cells, " | ") + " |" }

// freshID is a new task ID from the matrix's generator, unused in d and not
// in used (the IDs given to the rows being built), which it joins.
func (d *Doc) freshID(now time.Time, used map[string]bool) (string, error) {
	id, err := d.NewID(now, func(id string) bool { return used[id] }, nil)
	if err != nil {
		return "", err
	}
	used[id] = true
	return id, nil
}

// withoutTables returns d's bytes with tables[at] replaced by table (its
// last line's ending kept) and the others removed, each with the blank line
// after it when a blank line (or the file's start) precedes it, so that no
// run of blank lines grows.
func (d *Doc) withoutTables(tables []*itemTable, at int, table string) []byte {
	var b strings.Builder
	b.Grow(len(d.src) + len(table))
	pos := 0
	for i, it := range tables {
		b.WriteString(d.str[pos:it.start])
		if i == at {
			b.WriteString(table)
			pos = it.end
			continue
		}
		end := nextLineStart(d.src, it.end)
		if blankBefore(d.src, it.start) {
			if next := nextLineStart(d.src, end); end < len(d.src) && strings.TrimSpace(d.str[end:next]) == "" {
				end = next
			}
		}
		pos = end
	}
	b.WriteString(d.str[pos:])
	return []byte(b.String())
}

// nextLineStart returns the start of the line after the one holding off.
func nextLineStart(src []byte, off int) int {
	for i := off; i < len(src); i++ {
		if src[i] == '\n' {
			return i + 1
		}
	}
	return len(src)
}

// blankBefore reports whether the line before the one starting at off is
// blank, or there is none.
func blankBefore(src []byte, off int) bool {
	if off == 0 {
		return true
	}
	prevStart := off - 1
	for prevStart > 0 && src[prevStart-1] != '\n' {
		prevStart--
	}
	return strings.TrimSpace(string(src[prevStart:off])) == ""
}

func (d *Doc) firstTaskTable() *table {
	for _, t := range d.tables {
		if t.isTask {
			return t
		}
	}
	return nil
}

// convertedItem is an item as its task row will hold it; cells are raw text.
type convertedItem struct {
	status, pri, diff, desc string
	extra                   map[string]string // old column key → cell
	line                    int
	title                   string // the Item, markers stripped
	summary                 bool   // in a table under a heading such as "Quick Reference"
	rawDesc                 string // the Description cell alone
}

// mergeRepeated folds an item that repeats an earlier one into it: the same
// title (case and spacing aside), where one of the two is in a summary table
// ("Quick Reference: P1 Items", "Overview") or both have the same
// description. The task keeps the first place and the
// fullest values: DONE when either copy is done, the longer description, the
// first priority and difficulty given.
func mergeRepeated(items []convertedItem) ([]convertedItem, []MergedItem) {
	merged := []MergedItem{}
	first := map[string]int{}
	var out []convertedItem
	for _, c := range items {
		key := strings.ToLower(strings.Join(strings.Fields(c.title), " "))
		i, seen := first[key]
		if key == "" || !seen || !(c.summary || out[i].summary || agree(c.rawDesc, out[i].rawDesc)) {
			if key != "" && !seen {
				first[key] = len(out)
			}
			out = append(out, c)
			continue
		}
		into := &out[i]
		if into.summary && !c.summary {
			// The summary's copy goes into the row of the item's own
			// section, which names the task from now on.
			merged = append(merged, MergedItem{Line: into.line, Into: c.line})
			into.line, into.title = c.line, c.title
		} else {
			merged = append(merged, MergedItem{Line: c.line, Into: into.line})
		}
		if statusRank(c.status) > statusRank(into.status) {
			into.status = c.status
		}
		if len(c.desc) > len(into.desc) {
			into.desc, into.rawDesc = c.desc, c.rawDesc
		}
		if into.pri == "" {
			into.pri = c.pri
		}
		if into.diff == "" {
			into.diff = c.diff
		}
		for k, v := range c.extra {
			if into.extra[k] == "" {
				into.extra[k] = v
			}
		}
		into.summary = into.summary && c.summary
	}
	return out, merged
}

func agree(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a != "" && a == b
}

// statusRank orders the statuses a migration writes: a copy that says more
// about progress wins.
func statusRank(s string) int {
	switch s {
	case "DONE":
		return 4
	case "REVIEW":
		return 3
	case "IN_PROGRESS", "BLOCKED":
		return 2
	}
	return 1
}

// summaryHeading reports whether a heading files a table that repeats items
// listed elsewhere.
func summaryHeading(text string) bool {
	l := strings.ToLower(text)
	for _, w := range []string{"quick reference", "summary", "overview", "at a glance", "index", "tl;dr", "cheat sheet"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// lineRange is "line 4" or "lines 4-6".
func lineRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

// oldColumn is a column of the Item tables besides Item, Priority,
// Difficulty and Description (Backlog, Notes, ...), which the task table
// keeps as an extra column if any of its cells holds more than markers.
type oldColumn struct {
	key    string // lower-cased old name: the same column in every table
	header string // its name in the task table
}

// converter turns the rows of Item tables into task rows, collecting the
// cells it cannot read and the old columns to keep.
type converter struct {
	heads                 []heading
	diffLegend, priLegend map[string]string
	columns               []oldColumn     // in the order the headers name them
	seen                  map[string]bool // by key
	keep                  map[string]bool // by key
	problems              []string
	sectionDone           bool // the current table is under a "## Done" heading
	summary               bool // the current table is under a "Quick Reference" heading
	// statusLegend maps the markers a legend of the file defines (✅ =
	// complete) to what they mean, anywhere in an item's row.
	statusLegend map[string]markerState
	placeholders []int // lines of rows that hold no item
}

// sectionSaysDone reports whether a heading files its items as done
// ("## Done", "## ✅ Completed", "## Shipped in 2025").
func sectionSaysDone(heading string) bool {
	done, _ := sectionStatus(heading)
	return done
}

// sectionStatus says whether a heading files its items as done ("## Done")
// or as open ("## Not done yet", "## Open"); known is false when it says
// neither, and the heading above it decides.
func sectionStatus(heading string) (done, known bool) {
	if firstWordMatch(heading, []string{"open"}, []string{"not", "open", "todo", "pending", "undone"}) != "" {
		return false, true // "Not done yet"
	}
	if strings.ContainsAny(heading, "✅✔☑") {
		return true, true
	}
	if firstWordMatch(heading, []string{"done"}, []string{"done", "completed", "complete", "finished", "shipped", "closed"}) != "" {
		return true, true
	}
	return false, false
}

// table converts the rows of one Item table (blank rows and placeholders
// hold no item). The headings the table is under give a priority the rows do
// not (the nearest that names one: "### Feature Enhancements" under "## P2"
// is P2), say whether they are done, or that the table repeats others.
func (c *converter) table(it *itemTable) []convertedItem {
	chain := sectionOf(c.heads, it.start)
	section := ""
	for _, h := range chain {
		if priorityIn(h.text, c.priLegend) != "" {
			section = h.text
			break
		}
	}
	c.sectionDone, c.summary = false, false
	for _, h := range chain {
		if done, known := sectionStatus(h.text); known {
			c.sectionDone = done
			break
		}
	}
	c.summary = c.summaryTable(it)
	var out []convertedItem
	for _, r := range it.rows {
		if r.extra > 0 {
			c.problems = append(c.problems, fmt.Sprintf("line %d has %d cells but its header has %d (an unescaped | in a cell?); write a | inside a cell as \\|", r.line, len(r.cells), len(it.kinds)))
			continue
		}
		switch {
		case r.blank():
		case placeholderRow(it, r):
			c.placeholders = append(c.placeholders, r.line)
		default:
			out = append(out, c.row(it, r, section))
		}
	}
	return out
}

// placeholderRow reports whether a row stands for "no items here": its Item
// says none ("(None currently)", "None", "—", "N/A", "nothing yet") and every
// other cell is empty or says the same.
func placeholderRow(it *itemTable, r itemRow) bool {
	for i := range it.kinds {
		v := strings.Trim(cleanValue(r.cells[i]), "()[]_*. ")
		if v == "" || emptyValue(v) || placeholderWords(v) {
			continue
		}
		return false
	}
	for i, kind := range it.kinds {
		if kind == itemCol && strings.TrimSpace(r.cells[i]) != "" {
			return true
		}
	}
	return false
}

func placeholderWords(v string) bool {
	v = strings.ToLower(strings.Join(strings.Fields(v), " "))
	for _, p := range []string{"none", "nothing", "no items", "empty"} {
		if v == p || strings.HasPrefix(v, p+" ") && firstWordMatch(v[len(p):], []string{"x"}, []string{"currently", "yet", "now", "so", "at", "for", "here"}) != "" {
			return true
		}
	}
	return false
}

func (c *converter) row(it *itemTable, r itemRow, section string) convertedItem {
	item := convertedItem{extra: map[string]string{}}
	state := noMarker
	if c.sectionDone {
		state = markedDone
	}
	var title, desc, pri, status string
	for i, kind := range it.kinds {
		v := r.cells[i]
		if kind != itemCol {
			// A marker the file's legend defines (✅ = complete) says so
			// wherever it is in the row.
			state = state.merge(c.legendMarks(v))
		}
		switch kind {
		case itemCol:
			t, s := itemTitle(v)
			title, state = t, state.merge(s)
		case itemDescription:
			desc = v
		case itemPriority:
			pri = v
		case itemDifficulty:
			diff, ok := legacyDifficulty(v, c.diffLegend)
			if !ok {
				c.problems = append(c.problems, fmt.Sprintf("line %d: difficulty %q: not easy, med or hard, not in a Size legend, not a size code (S, M, L, XL)", r.line, v))
			}
			item.diff = diff
		default: // Status, Backlog, Notes, ...
			s, captured := markerCell(v)
			if kind == itemStatus {
				if st, err := NormalizeStatus(cleanValue(v)); err == nil {
					status, captured = st, true
				}
			}
			state = state.merge(s)
			name := it.tbl.cols[i].name
			key := strings.ToLower(name)
			if !c.seen[key] {
				c.seen[key] = true
				header := name
				if CanonicalColumn(name) != "" {
					header += " (old)" // e.g. a free-text Status: the task table has its own
				}
				c.columns = append(c.columns, oldColumn{key: key, header: header})
			}
			c.keep[key] = c.keep[key] || !captured
			item.extra[key] = v
		}
	}
	p, ok := legacyPriority(pri, section, c.priLegend)
	if !ok {
		c.problems = append(c.problems, fmt.Sprintf("line %d: priority %q: not P1-P4, not in a Priority legend, not a word like critical, high, medium or low", r.line, pri))
	}
	item.pri = p
	switch {
	case status != "":
		item.status = status
	case state == markedDone:
		item.status = "DONE"
	case state == markedInProgress:
		item.status = "IN_PROGRESS"
	default:
		item.status = "TODO"
	}
	item.line, item.title, item.summary, item.rawDesc = r.line, title, c.summary, desc
	item.desc = title + desc
	if title != "" && desc != "" {
		item.desc = title + " — " + desc
	}
	return item
}

// keptColumns are the old columns some cell of which holds more than markers.
func (c *converter) keptColumns() []oldColumn {
	var out []oldColumn
	for _, col := range c.columns {
		if c.keep[col.key] {
			out = append(out, col)
		}
	}
	return out
}

// summaryTable reports whether an Item table is under a heading that says
// it repeats items listed elsewhere ("Quick Reference: P1 Items").
func (c *converter) summaryTable(it *itemTable) bool {
	for _, h := range sectionOf(c.heads, it.start) {
		if summaryHeading(h.text) {
			return true
		}
	}
	return false
}

// legendMarks is what the markers the file's legend defines say in v.
func (c *converter) legendMarks(v string) markerState {
	state := noMarker
	for glyph, m := range c.statusLegend {
		if strings.Contains(v, glyph) {
			state = state.merge(m)
		}
	}
	return state
}
