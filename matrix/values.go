package matrix

import (
	"fmt"
	"strings"
)

// readTask checks r's values, reporting bad ones, and indexes it by ID. The
// Task itself is built only on demand (taskOf): validate never needs it.
func (d *Doc) readTask(r *row) {
	t := r.tbl
	vocab := d.vocab.orDefault()
	cells := r.cells()
	for i, k := range t.kindsOf() {
		if i >= len(cells) {
			break
		}
		if k < kindID {
			continue // free text: nothing to check
		}
		c := cells[i]
		// No unescaping: a `\|` makes these values invalid either way.
		v := d.str[c.text.start:c.text.end]
		if k == kindID {
			r.id = v
		}
		// Nearly every value is valid in a plain way: a valid ID, a
		// canonical value written as the vocabulary spells it, an empty or
		// dash cell where that is allowed, a YYYY-MM-DD date. Those skip the
		// vocabulary's normalization; anything else is checked in full.
		var plain bool
		switch k {
		case kindID:
			plain = ValidID(v)
		case kindStatus:
			plain = inList(vocab.statuses, v)
		case kindPri:
			plain = v == "" || isEmptyMark(v) || inList(vocab.priorities, v)
		case kindDiff:
			plain = v == "" || isEmptyMark(v) || inList(vocab.difficulties, v)
		default: // kindCreated, kindUpdated
			plain = v == "" || isEmptyMark(v) || validDate(v)
		}
		if plain {
			continue
		}
		if msg := d.checkValue(t.cols[i].canonical, v); msg != "" {
			d.rowError(r, int(c.text.start), "%s", msg)
		}
	}
	first, h := -1, uint64(0)
	if r.id != "" {
		first, h = d.ids.first(d.rows, r.id)
	}
	d.rows = append(d.rows, r)
	switch {
	case r.id == "":
	case first < 0:
		d.ids.add(d.rows, len(d.rows)-1, h)
	default:
		prev := d.rows[first]
		d.rowError(r, int(r.cells()[r.tbl.colIndex[ColID]].text.start), "duplicate ID %s: also on line %d; give one of them a new ID", r.id, prev.line)
		prev.bad = true
		if d.ids.dups == nil {
			d.ids.dups = map[string][]*row{}
		}
		if _, ok := d.ids.dups[r.id]; !ok {
			d.ids.dups[r.id] = []*row{prev}
		}
		d.ids.dups[r.id] = append(d.ids.dups[r.id], r)
	}
}

// columnKind is a column's canonical name as a small number, for the loops
// over every cell of a matrix.
type columnKind uint8

const (
	kindExtra columnKind = iota
	kindMode
	kindSkills
	kindAgents
	kindDescription
	// readTask checks the values of these:
	kindID
	kindStatus
	kindPri
	kindDiff
	kindCreated
	kindUpdated
)

var kindOfColumn = map[string]columnKind{
	ColID: kindID, ColStatus: kindStatus, ColPri: kindPri, ColDiff: kindDiff, ColMode: kindMode, ColSkills: kindSkills,
	ColAgents: kindAgents, ColDescription: kindDescription, ColCreated: kindCreated, ColUpdated: kindUpdated,
}

func columnKinds(cols []column) []columnKind {
	kinds := make([]columnKind, len(cols))
	for i, c := range cols {
		kinds[i] = kindOfColumn[c.canonical] // kindExtra for ""
	}
	return kinds
}

// kindsOf returns t's column kinds, computing them for a table built
// without them.
func (t *table) kindsOf() []columnKind {
	if len(t.kinds) != len(t.cols) {
		t.kinds = columnKinds(t.cols)
	}
	return t.kinds
}

// inList reports whether s is one of list, exactly.
func inList(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkValue returns what is wrong with a value read from a canonical column.
// A dash ('-', '—') is an empty Pri, Diff, Created or Updated.
func (d *Doc) checkValue(col, v string) string {
	switch col {
	case ColID:
		if !ValidID(v) {
			return fmt.Sprintf("malformed ID %q: %s", v, idRule)
		}
	case ColStatus:
		if _, err := d.vocab.Status(v); err != nil {
			return fmt.Sprintf("unknown status %q; %s", v, d.vocab.orDefault().validList(ColStatus))
		}
	case ColPri, ColDiff:
		if v == "" || isEmptyMark(v) {
			return ""
		}
		if _, err := d.vocab.Normalize(col, v); err != nil {
			return fmt.Sprintf("unknown %s %q; %s", vocabNoun(col), v, d.vocab.orDefault().validList(col))
		}
	case ColCreated, ColUpdated:
		if v != "" && !isEmptyMark(v) && !validDateTime(v) {
			return fmt.Sprintf("bad %s date %q: %s", col, v, dateProblem(v))
		}
	}
	return ""
}

// taskOf builds the Task of a row, with values normalized where they are
// valid. A dash ('-', '—') reads as an empty cell, except in ID, Status and
// Description, where it is what was written.
func (d *Doc) taskOf(r *row) Task {
	t := Task{Skills: []string{}, Agents: []string{}, Line: int(r.line)}
	if r.endLine > r.line {
		t.EndLine = int(r.endLine)
	}
	// One look for a backslash in the row spares each cell its own.
	escapes := strings.IndexByte(d.str[r.span.start:r.span.end], '\\') >= 0
	cells := r.cells()
	for i, k := range r.tbl.kindsOf() {
		if i >= len(cells) {
			break
		}
		c := cells[i]
		v := d.str[c.text.start:c.text.end]
		if escapes {
			v = unescapeCell(v)
		}
		if t.EndLine > 0 && strings.IndexByte(v, '\r') >= 0 {
			v = strings.ReplaceAll(v, "\r\n", "\n") // a continued cell of a CRLF file
		}
		switch k {
		case kindID:
			t.ID = v
		case kindStatus:
			t.Status = d.normalizedOr(ColStatus, v)
		case kindPri:
			t.Priority = d.normalizedOr(ColPri, blankDash(v))
		case kindDiff:
			t.Difficulty = d.normalizedOr(ColDiff, blankDash(v))
		case kindMode:
			t.Mode = blankDash(v)
		case kindSkills:
			t.Skills = splitSkills(blankDash(v))
		case kindAgents:
			t.Agents = splitAgents(blankDash(v))
		case kindDescription:
			t.Description = DecodeText(v)
		case kindCreated:
			t.Created = blankDash(v)
		case kindUpdated:
			t.Updated = blankDash(v)
		case kindExtra:
			if t.Extra == nil {
				t.Extra = map[string]string{}
			}
			t.Extra[r.tbl.cols[i].name] = DecodeText(blankDash(v))
		}
	}
	return t
}

// normalizedOr normalizes a value of col with the Doc's vocabulary, or
// returns it as written when it is not valid.
func (d *Doc) normalizedOr(col, v string) string {
	if v == "" {
		return ""
	}
	if n, err := d.vocab.Normalize(col, v); err == nil {
		return n
	}
	return v
}
