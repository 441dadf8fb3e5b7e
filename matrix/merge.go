package matrix

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// A three-way merge of the matrix by task ID (`agentinfra merge-driver`,
// issue 32). Two branches that each add a task, or change different tasks,
// change different rows of one file: git's line merge conflicts on them at
// every merge and rebase, and `merge=union` duplicates rows. Merge matches
// rows by ID and columns by name instead:
//
//   - a row added on either side is kept, at its own position (see
//     mergeOrder); a row deleted on one side and unchanged on the other is
//     deleted, and deleted on one side and changed on the other is a
//     conflict;
//   - cell by cell, a change of one side is taken, a change made alike on
//     both is fine, Updated takes the later date, a set cell (Agents,
//     Skills, Deps) takes both sides' additions and removals, and any
//     other cell changed two ways is a conflict of that row alone;
//   - the same new ID on both sides with different rows keeps both, as a
//     conflict (`agentinfra validate --fix=renumber` gives one a new ID);
//   - a conflict is written as git's markers around the two versions of
//     that row (each with the rest of the row merged): the rest of the file
//     is merged;
//   - the text around the task tables (prose, headings, legends) merges as
//     git merges lines: MergeOptions.Lines, which the CLI runs with `git
//     merge-file`.
//
// Bytes are kept: a row nobody changed is copied as it was, a changed cell
// is written between its own padding, and line endings, padding style and
// the text after the last table are the file's. The merged bytes are read
// back before they are returned: a result that does not read as the rows
// merged is not returned; the file is merged as lines instead (ByLines
// says why), as it is when its task tables cannot be matched (a table added
// or removed on one side) or a side already holds conflict markers.

// MergeOptions tunes Merge.
type MergeOptions struct {
	// Lines merges text line by line, as `git merge-file` does: it returns
	// the merged text, with conflict markers, and the number of conflicts.
	// Merge calls it for the text outside the task tables when both sides
	// changed it, and for the whole file when it is not merged by ID. nil:
	// such a merge fails.
	Lines func(base, ours, theirs []byte) ([]byte, int, error)
	// MarkerSize is the length of the conflict markers (git's %L); 0 is 7.
	MarkerSize int
}

// Conflict kinds of a merge.
const (
	// ConflictCells is a row whose cells both sides changed differently.
	ConflictCells = "cells"
	// ConflictDeleted is a row one side deleted and the other changed.
	ConflictDeleted = "deleted"
	// ConflictAddedBoth is one new ID on both sides, on different rows.
	ConflictAddedBoth = "added-both"
	// ConflictLines is a conflict of the line merge: in the text around the
	// tables, or anywhere in a file merged as lines.
	ConflictLines = "lines"
)

// AddedBothNote ends the ours label of a conflict of one new ID on both
// sides, so that validate can tell it from a row both sides changed.
const AddedBothNote = "added on both sides"

// MergeConflict is one conflict of a merge.
type MergeConflict struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	// Line is the line of the conflict's <<<<<<< marker in the result.
	Line int `json:"line"`
	// Cells are the cells both sides changed differently (ConflictCells).
	Cells []CellConflict `json:"cells,omitempty"`
	// DeletedBy is "ours" or "theirs" (ConflictDeleted).
	DeletedBy string `json:"deleted_by,omitempty"`
}

// CellConflict is one cell both sides changed to different values.
type CellConflict struct {
	Column string `json:"column"`
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
}

// MergeResult is what Merge returns.
type MergeResult struct {
	Bytes     []byte
	Conflicts []MergeConflict
	// ByLines says why the file was merged as lines rather than by task
	// ID; "" when it was merged by ID.
	ByLines string
}

// Merge merges ours and theirs, two versions of a matrix that both come
// from base (see the comment above). An error means nothing was merged.
func Merge(base, ours, theirs []byte, o MergeOptions) (MergeResult, error) {
	if o.MarkerSize <= 0 {
		o.MarkerSize = 7
	}
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return MergeResult{Bytes: ours}, nil
	case bytes.Equal(base, ours):
		return MergeResult{Bytes: theirs}, nil
	}
	m := &merger{o: o}
	res, why := m.merge(base, ours, theirs)
	if why == "" {
		return res, nil
	}
	return m.byLines(base, ours, theirs, why)
}

// byLines merges the whole file with Lines.
func (m *merger) byLines(base, ours, theirs []byte, why string) (MergeResult, error) {
	if m.o.Lines == nil {
		return MergeResult{}, fmt.Errorf("%w: the matrix cannot be merged by task ID (%s) and no line merge was given", ErrInvalid, why)
	}
	out, n, err := m.o.Lines(base, ours, theirs)
	if err != nil {
		return MergeResult{}, err
	}
	res := MergeResult{Bytes: out, ByLines: why}
	if n > 0 {
		for _, b := range ConflictBlocks(out) {
			res.Conflicts = append(res.Conflicts, MergeConflict{Kind: ConflictLines, Line: b.Line})
		}
		if len(res.Conflicts) == 0 {
			res.Conflicts = []MergeConflict{{Kind: ConflictLines, Line: 1}}
		}
	}
	return res, nil
}

// merger is one merge.
type merger struct {
	o                  MergeOptions
	base, ours, theirs *mver
	conflicts          []MergeConflict
	conflictAt         []int // the output offset of each row conflict's block
	out                bytes.Buffer
}

// mver is one side of a merge: its task tables and rows.
type mver struct {
	d      *Doc
	tables []*mtable
	all    []mrow  // every row, in file order
	docRow []int32 // the index in all of each of d.rows
	// other holds the rows d's ID index does not find: a second row of an
	// ID, a row that could not be read or has no ID.
	other map[string]*mrow
	order []seqItem
	byPtr map[*row]*mrow // built when first needed (byRow)
}

// row returns the row of key, nil when the side has none.
func (v *mver) row(key string) *mrow {
	if strings.IndexByte(key, 0) >= 0 {
		return v.other[key]
	}
	i, _ := v.d.ids.first(v.d.rows, key)
	if i < 0 {
		return nil
	}
	return &v.all[v.docRow[i]]
}

func (v *mver) has(key string) bool { return v.row(key) != nil }

type mtable struct {
	t    *table
	cols []string // column keys
	idx  map[string]int
	// start and end are the table's bytes: its header line to the end of
	// its last row (without the line ending after it).
	start, end int
	eol        string
}

type mrow struct {
	key  string
	id   string // "" for a row that could not be read
	tbl  int
	r    *row
	keep bool // kept whole: a row that could not be read, or without an ID
	pos  int  // its index in its side's order
}

// columnKey matches columns by name: a canonical column by its canonical
// name (Priority is Pri), any other by its name in any case.
func columnKey(c column) string {
	if c.canonical != "" {
		return "=" + c.canonical
	}
	return strings.ToLower(c.name)
}

func newMver(src []byte) (*mver, string) {
	d := Parse(src)
	v := &mver{d: d, other: map[string]*mrow{}, docRow: make([]int32, 0, len(d.rows))}
	n := 0
	for _, t := range d.tables {
		if t.isTask {
			n += len(t.rows)
		}
	}
	v.all, v.order = make([]mrow, 0, n), make([]seqItem, 0, n)
	seen := map[string]int{} // the keys of rows the ID index does not find, and of IDs seen twice
	for _, t := range d.tables {
		if !t.isTask {
			continue
		}
		mt := &mtable{t: t, idx: map[string]int{}, start: t.header.start, end: t.lastEnd, eol: t.eol}
		for _, c := range t.cols {
			k := columnKey(c)
			if _, dup := mt.idx[k]; dup {
				k += "#" + strconv.Itoa(len(mt.cols))
			}
			mt.idx[k] = len(mt.cols)
			mt.cols = append(mt.cols, k)
		}
		gi := len(v.tables)
		v.tables = append(v.tables, mt)
		for _, r := range t.rows {
			mr := mrow{tbl: gi, r: r, pos: len(v.order)}
			if r.unreadable == 0 {
				v.docRow = append(v.docRow, int32(len(v.all)))
			}
			if r.unreadable == 0 && r.id != "" {
				mr.id, mr.key = r.id, r.id
				if len(d.ids.dups) > 0 && len(d.byID(r.id)) > 1 {
					// A second row of an ID (a row copied) is matched with
					// the other sides' second one.
					if k := seen[r.id]; k > 0 {
						mr.key += "\x00#" + strconv.Itoa(k)
					}
					seen[r.id]++
				}
			} else {
				mr.keep, mr.key = true, "\x00"+d.str[r.span.start:r.span.end]
				if k := seen[mr.key]; k > 0 {
					mr.key += "\x00#" + strconv.Itoa(k)
				}
				seen[mr.key]++
			}
			v.all = append(v.all, mr)
			v.order = append(v.order, seqItem{key: mr.key, grp: gi})
		}
	}
	for i := range v.all {
		if mr := &v.all[i]; strings.IndexByte(mr.key, 0) >= 0 {
			v.other[mr.key] = mr
		}
	}
	if len(ConflictBlocks(src)) > 0 {
		return v, "a side holds conflict markers already"
	}
	return v, ""
}

// cell returns the text of row r's column key, and whether its table has
// that column.
func (v *mver) cell(r *mrow, key string) (string, bool) {
	if r == nil {
		return "", false
	}
	i, ok := v.tables[r.tbl].idx[key]
	if !ok {
		return "", false
	}
	return v.d.cellAt(r.r, i), true
}

func (v *mver) raw(r *mrow) string { return v.d.str[r.r.span.start:r.r.span.end] }

// changed reports whether side v changed row r (of base rb): a cell of a
// column both have differs, or a column base lacks has text.
func (m *merger) changed(v *mver, r, rb *mrow) bool {
	if rb == nil {
		return true
	}
	if r.keep || rb.keep {
		return false // a row kept whole is matched by its bytes
	}
	for _, k := range v.tables[r.tbl].cols {
		x, _ := v.cell(r, k)
		b, _ := m.base.cell(rb, k)
		if x != b {
			return true
		}
	}
	return false
}

func (m *merger) merge(base, ours, theirs []byte) (MergeResult, string) {
	var why [3]string
	m.base, why[0] = newMver(base)
	m.ours, why[1] = newMver(ours)
	m.theirs, why[2] = newMver(theirs)
	for _, w := range why {
		if w != "" {
			return MergeResult{}, w
		}
	}
	n := len(m.ours.tables)
	if len(m.theirs.tables) != n {
		return MergeResult{}, fmt.Sprintf("ours has %d task tables and theirs %d", n, len(m.theirs.tables))
	}
	if len(m.base.tables) != n && len(m.base.tables) != 0 {
		return MergeResult{}, fmt.Sprintf("a side added or removed a task table (%d in the common ancestor, %d on each side)", len(m.base.tables), n)
	}
	if n == 0 {
		return MergeResult{}, "no side has a task table"
	}
	token, ok := tokenFor(base, ours, theirs)
	if !ok {
		return MergeResult{}, "no placeholder is free in the file"
	}
	prose, proseConflicts, err := m.mergeProse(token)
	if err != nil {
		return MergeResult{}, err.Error()
	}
	plans := m.plan()
	pieces, why2 := splitAtTokens(prose, token, n)
	if why2 != "" {
		return MergeResult{}, why2
	}
	m.out.Grow(len(ours) + len(theirs)/8)
	for k, p := range plans {
		m.out.Write(pieces[k])
		m.writeTable(p)
	}
	m.out.Write(pieces[n])
	out := m.out.Bytes()
	if why := m.verify(out, plans); why != "" {
		return MergeResult{}, why
	}
	res := MergeResult{Bytes: out}
	// Lines of the conflicts, in file order: the row conflicts' blocks are
	// where they were written; any other block is the line merge's.
	rowAt := map[int]int{}
	for i, off := range m.conflictAt {
		rowAt[off] = i
	}
	lines := newLineIndex(out)
	for _, b := range ConflictBlocks(out) {
		if i, ok := rowAt[b.start]; ok {
			c := m.conflicts[i]
			c.Line = b.Line
			res.Conflicts = append(res.Conflicts, c)
			continue
		}
		res.Conflicts = append(res.Conflicts, MergeConflict{Kind: ConflictLines, Line: lines.line(b.start)})
	}
	if proseConflicts > 0 && len(res.Conflicts) == len(m.conflicts) {
		res.Conflicts = append(res.Conflicts, MergeConflict{Kind: ConflictLines, Line: 1})
	}
	return res, ""
}

// tokenFor returns a line that none of the files holds, to stand for a
// task table in the text around the tables.
func tokenFor(files ...[]byte) (string, bool) {
	for i := 0; i < 100; i++ {
		tok := "@@agentinfra-merge-table-" + strconv.Itoa(i) + "@@"
		free := true
		for _, f := range files {
			if bytes.Contains(f, []byte(tok)) {
				free = false
			}
		}
		if free {
			return tok, true
		}
	}
	return "", false
}

// skeleton is v's bytes with each task table replaced by the token line.
func (v *mver) skeleton(token string) []byte {
	var b bytes.Buffer
	pos := 0
	for _, t := range v.tables {
		b.Write(v.d.src[pos:t.start])
		b.WriteString(token)
		pos = t.end
	}
	b.Write(v.d.src[pos:])
	return b.Bytes()
}

// mergeProse merges the text around the tables: taken from the side that
// changed it, or by Lines when both did.
func (m *merger) mergeProse(token string) ([]byte, int, error) {
	o, t := m.ours.skeleton(token), m.theirs.skeleton(token)
	var b []byte
	if len(m.base.tables) > 0 {
		b = m.base.skeleton(token)
	} else {
		// No table in the common ancestor (both sides made the file):
		// the same text around the same number of tables.
		b = m.base.d.src
	}
	switch {
	case bytes.Equal(o, t), bytes.Equal(b, t):
		return o, 0, nil
	case bytes.Equal(b, o):
		return t, 0, nil
	}
	if m.o.Lines == nil {
		return nil, 0, fmt.Errorf("both sides changed the text around the task tables and no line merge was given")
	}
	out, n, err := m.o.Lines(b, o, t)
	if err != nil {
		return nil, 0, fmt.Errorf("merge the text around the task tables: %v", err)
	}
	return out, n, nil
}

// splitAtTokens cuts the merged text at the n tokens, which must each stand
// alone on a line, once, in order, outside any conflict.
func splitAtTokens(prose []byte, token string, n int) ([][]byte, string) {
	if bytes.Count(prose, []byte(token)) != n {
		return nil, "the line merge of the text around the tables lost or repeated a table"
	}
	blocks := ConflictBlocks(prose)
	pieces := make([][]byte, 0, n+1)
	pos := 0
	for k := 0; k < n; k++ {
		i := bytes.Index(prose[pos:], []byte(token))
		at := pos + i
		for _, b := range blocks {
			if at >= b.start && at < b.end {
				return nil, "a conflict of the text around the tables holds a table"
			}
		}
		pieces = append(pieces, prose[pos:at])
		pos = at + len(token)
	}
	return append(pieces, prose[pos:]), ""
}
