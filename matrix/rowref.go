package matrix

import "iter"

// RowRef is a task row as written, for checks that need more than the file
// (the task package checks modes, skills and folders against the
// workspace): the raw text of three cells, without building a Task, which
// would cost more than the checks on a large matrix.
type RowRef struct {
	ID string
	// Status is the canonical status when the vocabulary knows it, else the cell as written.
	Status string
	// Mode and Skills are the cells as written; "" for empty or a dash.
	Mode, Skills string
	// Index is the row's position among the task rows (0-based, file
	// order, as TaskIndex returns it, below NumTasks): checks can keep per-row facts in a
	// slice instead of a map keyed by ID.
	Index int
	r     *row
}

// RowRefs yields every task row in file order. It yields them one by one
// rather than returning a slice: a slice of 10,000 RowRefs is 0.7 MB that
// a check reads once.
func (d *Doc) RowRefs() iter.Seq[RowRef] {
	return func(yield func(RowRef) bool) {
		var tbl *table
		status, mode, skills := -1, -1, -1
		vocab := d.vocab.orDefault()
		for i, r := range d.rows {
			if r.tbl != tbl { // column positions once per table, not three map look-ups per row
				tbl = r.tbl
				status, mode, skills = tbl.index(ColStatus), tbl.index(ColMode), tbl.index(ColSkills)
			}
			st := d.cellAt(r, status)
			if !inList(vocab.statuses, st) { // nearly every status is written as the vocabulary spells it
				if s, err := vocab.Status(st); err == nil {
					st = s
				}
			}
			ref := RowRef{ID: r.id, Status: st, Mode: blankDash(d.cellAt(r, mode)),
				Skills: blankDash(d.cellAt(r, skills)), Index: i, r: r}
			if !yield(ref) {
				return
			}
		}
	}
}

// TaskIndex returns the Index of the task row with id, or -1 when no task
// row has it.
func (d *Doc) TaskIndex(id string) int { i, _ := d.ids.first(d.rows, id); return i }

// WarnAt is a warning located at the start of a row's cell (col is a
// canonical column; the row's start when the table has no such column).
func (d *Doc) WarnAt(ref RowRef, col, msg string) Diagnostic {
	r := ref.r
	off := int(r.span.start)
	if i, ok := r.tbl.colIndex[col]; ok && i < len(r.cells()) {
		off = int(r.cells()[i].text.start)
	}
	return d.diagAt(off, SeverityWarning, "%s", msg)
}

// HasID reports whether a row holds id: a task row, or a row that could not
// be read whose ID cell holds it.
func (d *Doc) HasID(id string) bool { return d.rowWithID(id) != nil }

// UnreadRowLine is the first line of the row with id that could not be read
// (a wrong cell count, a row that never ends); 0 when there is none, or a
// row with id was read.
func (d *Doc) UnreadRowLine(id string) int {
	if d.HasTask(id) {
		return 0
	}
	if r := d.unread[id]; r != nil {
		return int(r.line)
	}
	return 0
}

// HasTask reports whether a task row (one that was read) has id.
func (d *Doc) HasTask(id string) bool { i, _ := d.ids.first(d.rows, id); return i >= 0 }
