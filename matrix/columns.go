package matrix

import (
	"fmt"
	"slices"
	"strings"
)

// Adding the standard columns a task table lacks (`agentinfra migrate
// --add-columns`). Real matrices often have no Agents (or Skills, Mode)
// column; the column is inserted where the canonical header has it, and each
// row gets a cell there: empty, or the value the caller gives (the holder a
// claim recorded in the task README, say). Only the inserted cells are new
// bytes: every other character of every line, padding included, is kept.

// TableColumns says which columns AddColumns added to the task table whose
// header is on Line.
type TableColumns struct {
	Line  int      `json:"line"`
	Added []string `json:"added"`
	// Filled counts the rows that got a value (not an empty cell).
	Filled int `json:"filled"`
}

// RowHasColumn reports whether the task table of id's row has the canonical
// column col; false when no task row has id.
func (d *Doc) RowHasColumn(id, col string) bool {
	r := d.rowWithID(id)
	if r == nil {
		return false
	}
	_, ok := r.tbl.colIndex[col]
	return ok
}

// MissingColumns returns, for each task table, the canonical columns of want
// (all of CanonicalColumns when want is empty) that it lacks, by header line.
func (d *Doc) MissingColumns(want []string) map[int][]string {
	if len(want) == 0 {
		want = CanonicalColumns
	}
	out := map[int][]string{}
	for _, t := range d.tables {
		if !t.isTask {
			continue
		}
		for _, c := range CanonicalColumns {
			if _, ok := t.colIndex[c]; !ok && slices.Contains(want, c) {
				out[t.headerLine] = append(out[t.headerLine], c)
			}
		}
	}
	return out
}

// AddColumns inserts into every task table the canonical columns of want
// (canonical names; empty: every canonical column) that it lacks, each where
// CanonicalHeader puts it: after the nearest column that comes before it
// there. fill gives values by task ID and column (nil: every new cell
// empty). A table with a row that goes on over several lines or could not be
// read is refused (run `agentinfra validate --fix` or repair it first), as
// is a value that would not read back; nothing changes then.
func (d *Doc) AddColumns(want []string, fill map[string]map[string]string) ([]TableColumns, error) {
	for _, c := range want {
		if !slices.Contains(CanonicalColumns, c) {
			return nil, invalid("column", c, "not a standard column", CanonicalColumns)
		}
	}
	missing := d.MissingColumns(want)
	var out []TableColumns
	type edit struct {
		at   int
		text string
	}
	var edits []edit
	for _, t := range d.tables {
		add := missing[t.headerLine]
		if !t.isTask || len(add) == 0 {
			continue
		}
		for _, r := range t.rows {
			if r.unreadable != 0 || r.endLine > r.line {
				return nil, refusedf("the task table on line %d has a row (line %d) that goes on over several lines or could not be read; run `agentinfra validate --fix` (or repair the row by hand) first, then add the columns", t.headerLine, r.line)
			}
		}
		// Where each new column goes: before the old cell at index.
		cols := make([]string, len(t.cols))
		for i, c := range t.cols {
			cols[i] = c.canonical
		}
		type insert struct {
			before int // old cell index it goes before (len(t.cols): at the end)
			name   string
		}
		var ins []insert
		for _, name := range add {
			ci := slices.Index(CanonicalColumns, name)
			before := len(t.cols)
			for i := len(t.cols) - 1; i >= 0; i-- {
				if k := slices.Index(CanonicalColumns, cols[i]); k >= 0 && k < ci {
					before = i + 1
					break
				}
			}
			if before == len(t.cols) {
				// Nothing before it: before the first column that comes after it.
				for i := range t.cols {
					if k := slices.Index(CanonicalColumns, cols[i]); k > ci {
						before = i
						break
					}
				}
			}
			if before == len(t.cols) && !t.pipes {
				return nil, refusedf("the task table on line %d has no outer pipes, so a column cannot be added after its last one; add %s to its header by hand", t.headerLine, name)
			}
			ins = append(ins, insert{before, name})
		}
		tc := TableColumns{Line: t.headerLine}
		for _, in := range ins {
			tc.Added = append(tc.Added, in.name)
		}
		lineEdits := func(ls, le int, text func(name string) string) error {
			pipes := unescapedPipes(d.src[ls:le])
			lead := t.pipes
			for _, in := range ins {
				var at int
				var s string
				// The pipe before old cell in.before, and its style.
				k := in.before
				if !lead {
					k--
				}
				switch {
				case k < 0: // a table without outer pipes, before its first cell
					at, s = ls+leadingSpace(d.src[ls:le]), text(in.name)+" | "
				case k < len(pipes):
					p := ls + pipes[k]
					spaced := p+1 < le && d.src[p+1] == ' ' || p+1 == le && p > ls && d.src[p-1] == ' '
					at = p + 1
					if spaced {
						s = " " + text(in.name) + " |"
					} else {
						s = text(in.name) + "|"
					}
				default: // after the last cell of a line without its closing pipe
					at, s = ls+trimmedEnd(d.src[ls:le]), " | "+text(in.name)
				}
				edits = append(edits, edit{at, s})
			}
			return nil
		}
		_ = lineEdits(t.header.start, t.header.end, func(name string) string { return name })
		ds, de, _ := lineAt(d.src, nextLine(d.src, t.header.start))
		_ = lineEdits(ds, de, func(string) string { return "---" })
		for _, r := range t.rows {
			vals := fill[r.id]
			_ = lineEdits(int(r.span.start), int(r.span.end), func(name string) string {
				if v := vals[name]; v != "" {
					return escapeCell(v)
				}
				return ""
			})
			for _, in := range ins {
				if vals[in.name] != "" {
					tc.Filled++
				}
			}
		}
		out = append(out, tc)
	}
	if len(edits) == 0 {
		return out, nil
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	var b strings.Builder
	b.Grow(len(d.src) + 16*len(edits))
	pos := 0
	for _, e := range edits {
		b.WriteString(d.str[pos:e.at])
		b.WriteString(e.text)
		pos = e.at
	}
	b.WriteString(d.str[pos:])
	before := d.Tasks()
	nd := ParseWith([]byte(b.String()), d.vocab)
	after := nd.Tasks()
	ok := len(after) == len(before) && countErrors(nd.diags) <= countErrors(d.diags)
	for i := 0; ok && i < len(before); i++ {
		want := before[i]
		for _, c := range out {
			for _, name := range c.Added {
				if v := fill[want.ID][name]; v != "" {
					setField(&want, name, v)
				}
			}
		}
		ok = sameTask(want, after[i])
	}
	if !ok {
		return nil, refusedf("adding the columns would change how rows read; nothing was changed (run `agentinfra validate` and repair what it reports first)")
	}
	*d = *nd
	return out, nil
}

// unescapedPipes returns the offsets of the `|` in line that no `\` escapes.
func unescapedPipes(line []byte) []int {
	var out []int
	for i, c := range line {
		if c == '|' && (i == 0 || line[i-1] != '\\') {
			out = append(out, i)
		}
	}
	return out
}

func leadingSpace(line []byte) int {
	i := 0
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	return i
}

func trimmedEnd(line []byte) int {
	i := len(line)
	for i > 0 && isSpace(line[i-1]) {
		i--
	}
	return i
}

// setField sets a canonical column's value on t as a reader would see it.
func setField(t *Task, col, v string) {
	switch col {
	case ColStatus:
		t.Status = v
	case ColPri:
		t.Priority = v
	case ColDiff:
		t.Difficulty = v
	case ColMode:
		t.Mode = v
	case ColSkills:
		t.Skills = splitSkills(v)
	case ColAgents:
		t.Agents = splitAgents(v)
	case ColDescription:
		t.Description = v
	case ColCreated:
		t.Created = v
	case ColUpdated:
		t.Updated = v
	}
}

// sameTask compares two tasks' values, not where they are.
func sameTask(a, b Task) bool {
	a.Line, a.EndLine, b.Line, b.EndLine = 0, 0, 0, 0
	return fmt.Sprint(a) == fmt.Sprint(b)
}
