package matrix

import (
	"fmt"
	"strings"
)

// Conflict is a conflict block read as task rows: each section is read in
// the file with every block replaced by that section, so a row between the
// markers reads with the columns of the table around it.
type Conflict struct {
	ConflictBlock
	// OursRows and TheirsRows are the task rows of each section, in order.
	OursRows, TheirsRows []ConflictRow
	// AddedBoth marks the merge driver's conflict of one new ID on both
	// sides (two different tasks): `validate --fix=renumber` keeps both.
	AddedBoth bool
}

// ConflictRow is one task row of a conflict's section.
type ConflictRow struct {
	ID string
	// Columns are the header names of its table; Cells the raw texts.
	Columns, Cells []string
	// Line is the row's first line in the file.
	Line int
	// idAt is where the ID cell is in the section's text.
	idAt span
}

// Cell returns the text of a column by name ("" when the row has none).
func (r ConflictRow) Cell(name string) string {
	for i, c := range r.Columns {
		if strings.EqualFold(c, name) || CanonicalColumn(c) != "" && CanonicalColumn(c) == CanonicalColumn(name) {
			return r.Cells[i]
		}
	}
	return ""
}

// IDs lists the task IDs of both sections, ours' first, each once.
func (c Conflict) IDs() []string {
	var out []string
	for _, rs := range [][]ConflictRow{c.OursRows, c.TheirsRows} {
		for _, r := range rs {
			if r.ID != "" && !containsFold(out, r.ID) {
				out = append(out, r.ID)
			}
		}
	}
	return out
}

// Row returns the row of id in ours' (ours) or theirs' section.
func (c Conflict) Row(id string, ours bool) (ConflictRow, bool) {
	rs := c.TheirsRows
	if ours {
		rs = c.OursRows
	}
	for _, r := range rs {
		if r.ID == id {
			return r, true
		}
	}
	return ConflictRow{}, false
}

// Renumbered is the text that keeps both rows of a conflict of one ID on
// both sides: ours' section, then theirs' with the ID cell of id set to
// newID.
func (c Conflict) Renumbered(id, newID string) (string, error) {
	r, ok := c.Row(id, false)
	if !ok {
		return "", fmt.Errorf("%w: theirs' side of the conflict on line %d has no row %s", ErrNotFound, c.Line, id)
	}
	if _, ok := c.Row(id, true); !ok {
		return "", fmt.Errorf("%w: task %s is on one side of the conflict on line %d only: there is nothing to renumber; keep it or not with --fix=ours or --fix=theirs", ErrInvalid, id, c.Line)
	}
	if !ValidID(newID) {
		return "", invalid("id", newID, "malformed: "+idRule, nil)
	}
	theirs := c.Theirs
	if !strings.HasSuffix(c.Ours, "\n") && c.Ours != "" {
		return "", fmt.Errorf("%w: the conflict on line %d has no line ending after ours' section", ErrInvalid, c.Line)
	}
	return c.Ours + theirs[:r.idAt.start] + newID + theirs[r.idAt.end:], nil
}

// Conflicts returns the conflicts of src read as rows (nil when src has
// none). v is the workspace's vocabulary (nil: the default).
func Conflicts(src []byte, v *Vocabulary) []Conflict {
	blocks := ConflictBlocks(src)
	if len(blocks) == 0 {
		return nil
	}
	out := make([]Conflict, len(blocks))
	for i, b := range blocks {
		out[i] = Conflict{ConflictBlock: b, AddedBoth: strings.Contains(b.OursLabel, AddedBothNote)}
	}
	for _, ours := range []bool{true, false} {
		// The view with every block replaced by this side's section, and
		// where each section lands in it.
		at := make([]span, len(blocks))
		var b strings.Builder
		pos := 0
		for i, c := range blocks {
			b.Write(src[pos:c.start])
			sec := c.Theirs
			if ours {
				sec = c.Ours
			}
			at[i] = span{b.Len(), b.Len() + len(sec)}
			b.WriteString(sec)
			pos = c.end
		}
		b.Write(src[pos:])
		d := ParseWith([]byte(b.String()), v)
		k := 0
		for _, r := range d.rows {
			off := int(r.span.start)
			for k < len(at) && off >= at[k].end {
				k++
			}
			if k == len(at) {
				break
			}
			if off < at[k].start {
				continue
			}
			c := &out[k]
			first := c.Line + 1 // ours' section starts after the <<<<<<< line
			if !ours {
				first = c.EndLine - strings.Count(c.Theirs, "\n")
			}
			cr := ConflictRow{ID: r.id, Line: first + d.lines.line(off) - d.lines.line(at[k].start)}
			for i, cell := range r.cells() {
				if i < len(r.tbl.cols) {
					cr.Columns = append(cr.Columns, r.tbl.cols[i].name)
					cr.Cells = append(cr.Cells, d.str[cell.text.start:cell.text.end])
				}
			}
			if i, ok := r.tbl.colIndex[ColID]; ok && i < len(r.cells()) {
				idc := r.cells()[i].text
				cr.idAt = span{int(idc.start) - at[k].start, int(idc.end) - at[k].start}
			}
			if ours {
				c.OursRows = append(c.OursRows, cr)
			} else {
				c.TheirsRows = append(c.TheirsRows, cr)
			}
		}
	}
	return out
}

// ConflictDiagnostics says, for each conflict of a file, what it holds and
// how to finish it: an error at its <<<<<<< line.
func ConflictDiagnostics(cs []Conflict) []Diagnostic {
	var out []Diagnostic
	add := func(c Conflict, format string, a ...any) {
		out = append(out, Diagnostic{Line: c.Line, Col: 1, Severity: SeverityError, Message: fmt.Sprintf(format, a...)})
	}
	for _, c := range cs {
		lines := fmt.Sprintf("lines %d-%d", c.Line, c.EndLine)
		ids := c.IDs()
		if len(ids) == 0 {
			add(c, "merge conflict (%s) outside the task rows: edit these lines into the text you want and delete the marker lines (<<<<<<<, =======, >>>>>>>)", lines)
			continue
		}
		whole := ""
		if len(ids) > 1 {
			whole = fmt.Sprintf(" (this conflict holds %d tasks, %s: --fix=ours or --fix=theirs takes the whole of one side)", len(ids), strings.Join(ids, ", "))
		}
		for _, id := range ids {
			o, inO := c.Row(id, true)
			t, inT := c.Row(id, false)
			finish := fmt.Sprintf("`agentinfra validate --fix=ours %s` or `agentinfra validate --fix=theirs %s`", id, id)
			switch {
			case inO && inT && c.AddedBoth:
				add(c, "merge conflict (%s): task %s was added on both sides as two different tasks (ours: %q, theirs: %q); keep both with `agentinfra validate --fix=renumber` (theirs gets the next free ID and its task folder is renamed), or keep one with %s%s",
					lines, id, short(o.Cell(ColDescription)), short(t.Cell(ColDescription)), finish, whole)
			case inO && inT:
				add(c, "merge conflict in task %s (%s): both sides changed %s; finish with %s, or edit the lines into the one row you want and delete the marker lines%s",
					id, lines, cellDiff(o, t), finish, whole)
			case inO:
				add(c, "merge conflict in task %s (%s): ours changed the row and theirs deleted it; keep it with `agentinfra validate --fix=ours %s`, or delete it with `agentinfra validate --fix=theirs %s`%s",
					id, lines, id, id, whole)
			default:
				add(c, "merge conflict in task %s (%s): theirs changed the row and ours deleted it; keep it with `agentinfra validate --fix=theirs %s`, or delete it with `agentinfra validate --fix=ours %s`%s",
					id, lines, id, id, whole)
			}
		}
	}
	return out
}

// cellDiff names the cells two versions of a row differ in, with both values.
func cellDiff(o, t ConflictRow) string {
	var parts []string
	for i, name := range o.Columns {
		tv := t.Cell(name)
		if o.Cells[i] != tv {
			parts = append(parts, fmt.Sprintf("%s (ours %q, theirs %q)", name, short(o.Cells[i]), short(tv)))
		}
	}
	for i, name := range t.Columns {
		if !containsFold(o.Columns, name) && t.Cells[i] != "" {
			parts = append(parts, fmt.Sprintf("%s (ours has no such column, theirs %q)", name, short(t.Cells[i])))
		}
	}
	if len(parts) == 0 {
		return "the row's layout (the cells read the same)"
	}
	return strings.Join(parts, ", ")
}

// short cuts a long cell text for a message.
func short(s string) string {
	const limit = 80
	if r := []rune(s); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}

// ConflictView is src with every conflict replaced by ours' section (the
// file as it was on this branch, with everything else merged), for the
// checks of a file with conflicts; line maps one of its lines to src's.
func ConflictView(src []byte) (view []byte, line func(int) int) {
	blocks := ConflictBlocks(src)
	if len(blocks) == 0 {
		return src, func(l int) int { return l }
	}
	view = ResolveConflicts(src, func(c ConflictBlock) (string, bool) { return c.Ours, true })
	type shift struct{ from, by int } // view lines from `from` on are `by` lines further in src
	var shifts []shift
	removed := 0 // lines the blocks before this one took out
	for _, c := range blocks {
		ours := strings.Count(c.Ours, "\n")
		at := c.Line - removed // the view's line of ours' first line
		// Ours' lines sit one line further on in src (after <<<<<<<);
		// after the block, its markers and theirs' lines are gone too.
		shifts = append(shifts, shift{at, removed + 1})
		removed += c.EndLine - c.Line + 1 - ours
		shifts = append(shifts, shift{at + ours, removed})
	}
	return view, func(l int) int {
		by := 0
		for _, s := range shifts {
			if l >= s.from {
				by = s.by
			}
		}
		return l + by
	}
}
