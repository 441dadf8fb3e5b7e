package matrix

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
	r            *row
}

// RowRefs returns every task row in file order.
func (d *Doc) RowRefs() []RowRef {
	out := make([]RowRef, len(d.rows))
	for i, r := range d.rows {
		status := d.cell(r, ColStatus)
		if s, err := d.vocab.Status(status); err == nil {
			status = s
		}
		out[i] = RowRef{ID: r.id, Status: status, Mode: blankDash(d.cell(r, ColMode)),
			Skills: blankDash(d.cell(r, ColSkills)), r: r}
	}
	return out
}

// WarnAt is a warning located at the start of a row's cell (col is a
// canonical column; the row's start when the table has no such column).
func (d *Doc) WarnAt(ref RowRef, col, msg string) Diagnostic {
	r := ref.r
	off := r.span.start
	if i, ok := r.tbl.colIndex[col]; ok && i < len(r.cells) {
		off = int(r.cells[i].text.start)
	}
	return d.diagAt(off, SeverityWarning, "%s", msg)
}

// HasID reports whether a row holds id: a task row, or a row that could not
// be read whose ID cell holds it.
func (d *Doc) HasID(id string) bool { return d.rowWithID(id) != nil }

// HasTask reports whether a task row (one that was read) has id.
func (d *Doc) HasTask(id string) bool { i, _ := d.ids.first(d.rows, id); return i >= 0 }
