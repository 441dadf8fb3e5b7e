package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// Read problems: rows a read does not return as data. A row that could not
// be read is an error, and its ID is taken; `|`-led lines that belong to no
// table are a warning. Adapters print them (ReadProblems), so that a read
// never returns less data in silence.

// readProblem records a row that could not be read.
func (d *Doc) readProblem(r *row, id string, dg Diagnostic) {
	r.bad = true
	r.id = id
	if d.why == nil {
		d.why = map[int]string{}
	}
	d.why[int(r.span.start)] = dg.Message
	d.diags = append(d.diags, dg)
	d.problems = append(d.problems, dg)
	if id == "" {
		return
	}
	if d.unread == nil {
		d.unread = map[string]*row{}
	}
	if _, dup := d.unread[id]; !dup {
		d.unread[id] = r
	}
}

// reportStrays warns about the runs of `|`-led lines that no table took in.
// Both lists are in file order.
func (d *Doc) reportStrays(runs []lineRun, taken []lineRun) {
	if len(runs) == 0 {
		return
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	for _, run := range runs {
		first, last := d.lines.line(run.start), d.lines.line(run.end)
		for _, tk := range taken {
			if tk.end < run.start || tk.start > run.end {
				continue
			}
			tf, tl := d.lines.line(tk.start), d.lines.line(tk.end)
			if tf <= first {
				first = max(first, tl+1)
			} else {
				d.strayWarning(first, min(last, tf-1))
				first = tl + 1
			}
		}
		d.strayWarning(first, last)
	}
}

func (d *Doc) strayWarning(first, last int) {
	if first > last {
		return
	}
	d.strays = append(d.strays, [2]int{first, last})
	var dg Diagnostic
	if first == last {
		dg = Diagnostic{Line: first, Col: 1, Severity: SeverityWarning,
			Message: fmt.Sprintf("line %d looks like a table row but belongs to no table (no header and |---| row above it)", first)}
	} else {
		dg = Diagnostic{Line: first, Col: 1, Severity: SeverityWarning,
			Message: fmt.Sprintf("lines %d-%d look like table rows but belong to no table (no header and |---| row above them)", first, last)}
	}
	d.diags = append(d.diags, dg)
	d.problems = append(d.problems, dg)
}

// ReadProblems returns the diagnostics of rows a read does not return as
// data, in line order: rows that could not be read (a wrong number of cells,
// a row that never ends) are errors, `|`-led lines that belong to no table
// are warnings. A continued row is read whole and is no read problem.
func (d *Doc) ReadProblems() []Diagnostic {
	out := append([]Diagnostic{}, d.problems...)
	sortDiagnostics(out)
	return out
}

// ErrUnreadable is the error for the ID of a row that is in the matrix but
// could not be read (a wrong number of cells, a row that never ends): not
// "not found", and not the caller's mistake.
var ErrUnreadable = errors.New("task row could not be read")

// problemOf says why r could not be read ("" for a row that was read).
func (d *Doc) problemOf(r *row) string { return d.why[int(r.span.start)] }

// unreadableErr is the error for a lookup of a row that could not be read.
func (d *Doc) unreadableErr(r *row) error {
	lines := fmt.Sprintf("line %d", r.line)
	if r.endLine > r.line {
		lines = fmt.Sprintf("lines %d-%d", r.line, r.endLine)
	}
	return &wrapped{msg: fmt.Sprintf("task %s is on %s of the matrix but could not be read: %s", r.id, lines, d.problemOf(r)), err: ErrUnreadable}
}

// swallowedErr is the error for an ID whose row another row took in: a
// `|`-led line starting with the ID lies inside a row that goes on over
// several lines (one that could not be read, or a cell read whole). The
// reader lost its way there; "no task" would be false. nil when no such
// line exists.
func (d *Doc) swallowedErr(id string) error {
	for _, t := range d.tables {
		for _, r := range t.rows {
			if r.endLine == r.line {
				continue
			}
			line := int(r.line)
			for off := nextLine(d.src, int(r.span.start)); off < int(r.span.end); {
				ls, le, next := lineAt(d.src, off)
				off, line = next, line+1
				if firstCell(d.src[ls:le]) != id {
					continue
				}
				of := "the row starting at line " + strconv.Itoa(int(r.line))
				if r.id != "" {
					of = "the row of task " + r.id + fmt.Sprintf(" (lines %d-%d)", r.line, r.endLine)
				}
				if r.unreadable != 0 {
					return &wrapped{msg: fmt.Sprintf("task %s is on line %d of the matrix, inside %s, which could not be read: %s", id, line, of, d.problemOf(r)), err: ErrUnreadable}
				}
				return &wrapped{msg: fmt.Sprintf("task %s is on line %d of the matrix, inside the Description of %s, which goes on over several lines and took this row in; end that row with its last cells before line %d (`agentinfra validate` shows it)", id, line, of, line), err: ErrUnreadable}
			}
		}
	}
	return nil
}

// firstCell returns the trimmed first cell of a `|`-led line, "" otherwise.
func firstCell(line []byte) string {
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 || line[0] != '|' {
		return ""
	}
	line = line[1:]
	if i := bytes.IndexByte(line, '|'); i >= 0 {
		line = line[:i]
	}
	return string(bytes.TrimSpace(line))
}

// DuplicateIDs returns an error for each task of tasks whose ID an earlier
// one has, in order: a list that holds both rows is read whole, but no
// command can show, change or claim either until one gets a new ID.
func DuplicateIDs(tasks []Task) []Diagnostic {
	var out []Diagnostic
	first := make(map[string]int, len(tasks))
	for _, t := range tasks {
		line, dup := first[t.ID]
		if !dup {
			first[t.ID] = t.Line
			continue
		}
		out = append(out, Diagnostic{Line: t.Line, Col: 1, Severity: SeverityError, Message: fmt.Sprintf(
			"duplicate ID %s: also on line %d; task show, update and claim refuse it until one of them gets a new ID", t.ID, line)})
	}
	return out
}
