package matrix

import (
	"fmt"
	"sort"
)

// RowEdit is the new cells of the task row that starts on Line, for
// ReplaceRowsAt.
type RowEdit struct {
	Line  int
	Cells []string
}

// ReplaceRowsAt is ReplaceRowAt for many rows with one parse: each row
// becomes one line of its cells (see ReplaceRow). Replacing rows one at a
// time parses the file once per row, which on a large matrix with many
// continued rows is quadratic. All or nothing: when any edit is invalid, or
// any row would not read back as the same row with its cells, or the file
// would get more errors, nothing changes and the error names the first such
// row (callers may then replace rows one at a time).
func (d *Doc) ReplaceRowsAt(edits []RowEdit) error {
	if len(edits) == 0 {
		return nil
	}
	byLine := map[int]*row{}
	for _, r := range d.rows {
		byLine[int(r.line)] = r
	}
	type planned struct {
		r     *row
		line  string
		cells []string
	}
	plan := make([]planned, 0, len(edits))
	continued := 0
	for _, e := range edits {
		r := byLine[e.Line]
		if r == nil {
			return fmt.Errorf("%w: no task row starts on line %d", ErrNotFound, e.Line)
		}
		line, err := d.oneLine(r, e.Cells)
		if err != nil {
			return fmt.Errorf("row on line %d: %w", e.Line, err)
		}
		if r.endLine > r.line {
			continued++
		}
		plan = append(plan, planned{r, line, e.Cells})
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].r.span.start < plan[j].r.span.start })
	for i := 1; i < len(plan); i++ {
		if plan[i].r == plan[i-1].r {
			return fmt.Errorf("%w: two edits of the row on line %d", ErrInvalid, plan[i].r.line)
		}
	}
	buf := make([]byte, 0, len(d.src))
	pos := 0
	for _, p := range plan {
		buf = append(buf, d.src[pos:p.r.span.start]...)
		buf = append(buf, p.line...)
		pos = int(p.r.span.end)
	}
	buf = append(buf, d.src[pos:]...)
	nd := ParseWith(buf, d.vocab)
	after := map[int]*row{}
	for _, r := range nd.rows {
		after[int(r.line)] = r
	}
	shift := 0 // lines removed above the current edit
	for _, p := range plan {
		line := int(p.r.line) - shift
		shift += int(p.r.endLine - p.r.line)
		back := after[line]
		ok := back != nil && int(back.endLine) == line && len(back.cells()) == len(p.cells)
		for i := 0; ok && i < len(back.cells()); i++ {
			ok = nd.str[back.cells()[i].text.start:back.cells()[i].text.end] == p.cells[i]
		}
		if !ok {
			return fmt.Errorf("%w: the new line for the row on line %d would not read back as the same row with these cells; nothing was changed", ErrRefused, p.r.line)
		}
	}
	if len(nd.rows) != len(d.rows) || countErrors(nd.diags) > countErrors(d.diags)-continued {
		return fmt.Errorf("%w: the new lines would change which rows are read, or add errors; nothing was changed", ErrRefused)
	}
	*d = *nd
	return nil
}
