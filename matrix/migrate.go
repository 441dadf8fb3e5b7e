package matrix

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
	// KeptColumns are the old columns carried over as extra columns because
	// they hold more than done markers (e.g. Backlog notes).
	KeptColumns []string `json:"kept_columns"`
	// NoPriority counts the items that got no priority: an empty Priority
	// cell under a heading that names none.
	NoPriority int `json:"no_priority"`
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
	if d.HasTaskTable() {
		return Migration{}, refusedf("the matrix already has a task table (line %d); migrate converts only a file that has none, so nothing was written", d.firstTaskTable().headerLine)
	}
	tables := d.itemTables()
	if len(tables) == 0 {
		return Migration{}, refusedf("nothing to migrate: the matrix has no task table and no older-format Item table (a table whose header has an Item column, e.g. | Item | Priority | Difficulty | Backlog | Description |); add a task table with this header instead:\n%s", strings.TrimSuffix(CanonicalHeader, "\n"))
	}
	conv := converter{heads: d.headings(), seen: map[string]bool{}, keep: map[string]bool{}}
	conv.diffLegend, conv.priLegend = d.legends()
	m := Migration{IDs: []string{}, KeptColumns: []string{}}
	var items []convertedItem
	for _, it := range tables {
		m.ItemTables = append(m.ItemTables, it.tbl.headerLine)
		items = append(items, conv.table(it)...)
	}
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
		if c.status == "DONE" {
			m.Done++
		} else {
			m.Todo++
		}
		if c.pri == "" {
			m.NoPriority++
		}
	}
	m.Migrated = len(items)
	m.TableLine = tables[0].tbl.headerLine
	out := d.withoutTables(tables, b.String())
	nd := Parse(out)
	if got := len(nd.rows); !nd.HasTaskTable() || got != len(items) || countErrors(nd.diags) > countErrors(d.diags) {
		return Migration{}, refusedf("the converted table reads back as %d rows, not %d, or with errors; nothing was written (please report this with the file)", got, len(items))
	}
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

// withoutTables returns d's bytes with the first of tables replaced by
// table (its last line's ending kept) and the others removed, each with the
// blank line after it when a blank line (or the file's start) precedes it,
// so that no run of blank lines grows.
func (d *Doc) withoutTables(tables []*itemTable, table string) []byte {
	var b strings.Builder
	b.Grow(len(d.src) + len(table))
	pos := 0
	for i, it := range tables {
		b.WriteString(d.str[pos:it.start])
		if i == 0 {
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
}

// sectionSaysDone reports whether a heading files its items as done
// ("## Done", "## ✅ Completed", "## Shipped in 2025").
func sectionSaysDone(heading string) bool {
	if firstWordMatch(heading, []string{"open"}, []string{"not", "open", "todo", "pending", "undone"}) != "" {
		return false // "Not done yet"
	}
	if strings.ContainsAny(heading, "✅✔☑") {
		return true
	}
	return firstWordMatch(heading, []string{"done"}, []string{"done", "completed", "complete", "finished", "shipped", "closed"}) != ""
}

// table converts the rows of one Item table (blank rows hold no item).
func (c *converter) table(it *itemTable) []convertedItem {
	section := ""
	for _, h := range c.heads {
		if h.off < it.start {
			section = h.text // the nearest heading above the table
		}
	}
	c.sectionDone = sectionSaysDone(section)
	var out []convertedItem
	for _, r := range it.rows {
		if r.extra > 0 {
			c.problems = append(c.problems, fmt.Sprintf("line %d has %d cells but its header has %d (an unescaped | in a cell?); write a | inside a cell as \\|", r.line, len(r.cells), len(it.kinds)))
			continue
		}
		if !r.blank() {
			out = append(out, c.row(it, r, section))
		}
	}
	return out
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
	default:
		item.status = "TODO"
	}
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
