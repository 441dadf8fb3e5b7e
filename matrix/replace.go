package matrix

import (
	"bytes"
	"fmt"
	"strings"
)

// ContinuedRow is a task row that goes on over several lines, as validate
// --fix needs it to write the row on one line.
type ContinuedRow struct {
	ID            string
	Line, EndLine int
	Columns       []string // the table's header names
	// Cells are the raw cell texts, `\|` not unescaped; a continued cell
	// keeps its line breaks (as in the file: CRLF in a CRLF file).
	Cells []string
}

// ContinuedRows returns the task rows that go on over several lines, in
// file order.
func (d *Doc) ContinuedRows() []ContinuedRow {
	var out []ContinuedRow
	for _, r := range d.rows {
		if r.endLine <= r.line {
			continue
		}
		cr := ContinuedRow{ID: r.id, Line: int(r.line), EndLine: int(r.endLine)}
		for _, c := range r.tbl.cols {
			cr.Columns = append(cr.Columns, c.name)
		}
		for _, c := range r.cells() {
			cr.Cells = append(cr.Cells, d.str[c.text.start:c.text.end])
		}
		out = append(out, cr)
	}
	return out
}

// ReplaceRow replaces every line of the task row of id with one row line made
// of cells, raw cell texts the caller has escaped: no line breaks, no bare
// `|`. The row keeps the table's pipe style (or its own outer pipes in a
// table without), its indentation and the line ending of its last line. The result must read back as the same row with
// these cells, or nothing changes.
func (d *Doc) ReplaceRow(id string, cells []string) error {
	rs := d.byID(id)
	if len(rs) == 0 {
		if r := d.unread[id]; r != nil {
			return d.unreadableErr(r)
		}
		return d.NotFound(id)
	}
	if len(rs) > 1 {
		return duplicateErr(id, rowLines(rs))
	}
	return d.replaceRow(rs[0], cells)
}

// ReplaceRowAt is ReplaceRow for the task row that starts on line: also a
// row without an ID or with a duplicated one.
func (d *Doc) ReplaceRowAt(line int, cells []string) error {
	for _, r := range d.rows {
		if int(r.line) == line {
			return d.replaceRow(r, cells)
		}
	}
	return fmt.Errorf("%w: no task row starts on line %d", ErrNotFound, line)
}

func (d *Doc) replaceRow(r *row, cells []string) error {
	line, err := d.oneLine(r, cells)
	if err != nil {
		return err
	}
	old, nrows, errs := *d, len(d.rows), countErrors(d.diags)
	wasContinued := r.endLine > r.line
	d.splice(r.span.wide(), line)
	var back *row
	for _, b := range d.rows {
		if b.line == r.line {
			back = b
			break
		}
	}
	ok := back != nil && back.endLine == r.line && len(d.rows) == nrows && len(back.cells()) == len(cells)
	if ok {
		for i, c := range back.cells() {
			if d.str[c.text.start:c.text.end] != cells[i] {
				ok = false
			}
		}
	}
	if wasContinued {
		errs-- // the continued row's own error is gone
	}
	if !ok || countErrors(d.diags) > errs {
		*d = old
		return refusedf("the new line for the row on line %d would not read back as the same row with these cells; nothing was changed", r.line)
	}
	return nil
}

// oneLine is the row line that replaces r: cells in the table's pipe style,
// with the row's indentation.
func (d *Doc) oneLine(r *row, cells []string) (string, error) {
	if len(cells) != len(r.tbl.cols) {
		return "", fmt.Errorf("%w: %d cells for a table of %d columns (line %d)", ErrInvalid, len(cells), len(r.tbl.cols), r.tbl.headerLine)
	}
	for i, c := range cells {
		if strings.ContainsAny(c, "\r\n") {
			return "", fmt.Errorf("%w: cell %d (%s) holds a line break; a row is one line", ErrInvalid, i+1, r.tbl.cols[i].name)
		}
		if c != strings.TrimSpace(c) {
			return "", fmt.Errorf("%w: cell %d (%s) starts or ends with white space", ErrInvalid, i+1, r.tbl.cols[i].name)
		}
		for j := 0; j < len(c); j++ {
			if c[j] == '|' && (j == 0 || c[j-1] != '\\') {
				return "", fmt.Errorf("%w: cell %d (%s) holds an unescaped |; write it as \\|", ErrInvalid, i+1, r.tbl.cols[i].name)
			}
		}
	}
	first := d.src[int(r.span.start):nextLine(d.src, int(r.span.start))]
	indent := first[:len(first)-len(bytes.TrimLeft(first, " \t"))]
	line := strings.Join(cells, " | ")
	// A row with outer pipes keeps them in a table without: they are
	// characters someone wrote.
	last := bytes.TrimRight(d.src[r.span.start:r.span.end], " \t\r\n")
	ownPipes := bytes.HasPrefix(bytes.TrimLeft(first, " \t"), []byte("|")) || bytes.HasSuffix(last, []byte("|"))
	if r.tbl.pipes || ownPipes || needsLeadingPipe(cells[0]) || needsTrailingPipe(cells[len(cells)-1]) {
		line = "| " + line + " |"
	}
	return string(indent) + line, nil
}
