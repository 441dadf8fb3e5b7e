package matrix

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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
