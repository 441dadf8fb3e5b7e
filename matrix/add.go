package matrix

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// AddTask appends t as a new row at the end of a task table: the table whose
// rows all share t's priority when the file keeps one table per priority, else
// the last task table. t must have an ID; see Doc.CreateTask for defaults.
func (d *Doc) AddTask(t Task) error {
	if !ValidID(t.ID) {
		return invalid("id", t.ID, "malformed: "+idRule, nil)
	}
	if r := d.rowWithID(t.ID); r != nil {
		return invalid("id", t.ID, fmt.Sprintf("already used on line %d", r.line), nil)
	}
	tbl := d.tableFor(t.Priority)
	if tbl == nil {
		return d.RequireTaskTable() // a *NoTaskTableError: says how to convert an older file
	}
	// A value the table has no column for would be dropped: refuse instead.
	given := []string{}
	for _, c := range []struct{ name, v string }{{ColDescription, t.Description}, {ColMode, t.Mode},
		{ColSkills, strings.Join(t.Skills, "")}, {ColAgents, strings.Join(t.Agents, "")}} {
		if strings.TrimSpace(c.v) != "" {
			given = append(given, c.name)
		}
	}
	for k, v := range t.Extra {
		if strings.TrimSpace(v) != "" {
			given = append(given, k)
		}
	}
	sort.Strings(given)
	for _, name := range given {
		if _, _, err := tbl.resolveColumn(name); err != nil {
			return err
		}
	}
	if r := tbl.brokenEnd; r != nil {
		return refusedf("the task table's last row (line %d) never ends, so a new row after it would become part of it; end that row by hand (its last line ends with its last cells and a |); then `agentinfra validate --fix` joins it into one line", r.line)
	}
	cells := make([]string, len(tbl.cols))
	for i, col := range tbl.cols {
		var v string
		if col.canonical != "" {
			v, _ = t.Field(col.canonical)
			if err := checkCellValue(fieldName(col.canonical, col.name), v); err != nil {
				return err
			}
			if v != "" || col.canonical == ColID || col.canonical == ColStatus {
				nv, err := d.normalizeValue(col.canonical, v)
				if err != nil {
					return err
				}
				v = nv
			}
		} else {
			v = t.Extra[col.name]
			for k, x := range t.Extra {
				if strings.EqualFold(k, col.name) {
					v = x
				}
			}
			if err := checkCellValue(col.name, v); err != nil {
				return err
			}
		}
		cells[i] = escapeCell(v)
	}
	line := strings.Join(cells, " | ")
	if tbl.pipes || needsLeadingPipe(cells[0]) || needsTrailingPipe(cells[len(cells)-1]) {
		line = "| " + line + " |"
	}
	old, nrows := *d, len(d.rows)
	// Insert before the last line's ending, using that ending, so that every
	// existing line keeps its bytes, its ending included.
	at, eol := tbl.lastEnd, tbl.eol
	switch rest := d.src[at:]; {
	case bytes.HasPrefix(rest, []byte("\r\n")):
		eol = "\r\n"
	case bytes.HasPrefix(rest, []byte("\n")):
		eol = "\n"
	case len(rest) == 1 && rest[0] == '\r':
		at, eol = at+1, "\n" // the file ends in a lone CR: make it CRLF
	}
	d.splice(span{at, at}, eol+line)
	if _, ok := d.Task(t.ID); !ok || len(d.rows) != nrows+1 {
		*d = old
		return refusedf("a new row for %s after line %d would not read back as one row; fix the table's last rows first (`agentinfra validate` names what is wrong)", t.ID, old.lines.line(tbl.lastEnd))
	}
	return nil
}

func (d *Doc) tableFor(priority string) *table {
	var last *table
	var byPri *table
	perPriority := 0
	taskTables := 0
	for _, t := range d.tables {
		if !t.isTask {
			continue
		}
		taskTables++
		last = t
		p, same, seen := "", true, false
		for _, r := range t.rows {
			if r.unreadable != 0 {
				continue
			}
			if !seen {
				p, seen = d.taskOf(r).Priority, true
			} else if d.taskOf(r).Priority != p {
				same = false
				break
			}
		}
		if seen && same {
			perPriority++
			if p == priority && byPri == nil {
				byPri = t
			}
		}
	}
	if taskTables > 1 && perPriority > 1 && byPri != nil {
		return byPri
	}
	return last
}
