package matrix

import (
	"slices"
	"strings"
)

// tablePlan is one merged task table.
type tablePlan struct {
	cols          []string // column keys
	sameCols      bool     // the three sides' tables have these columns
	header, align string   // its first two lines
	eol           string
	rows          []rowPlan
}

// rowPlan is one merged row, or one conflict block, and what each side's
// view of the result holds there (nil: nothing).
type rowPlan struct {
	text         string
	conflict     bool
	ours, theirs *expectRow
}

// expectRow is a row as the result must read back: its bytes (a row
// copied as it was), or its ID and cells.
type expectRow struct {
	raw  string
	id   string
	vals []string // by the table's columns; nil: compare raw
}

func (m *merger) plan() []*tablePlan {
	n := len(m.ours.tables)
	plans := make([]*tablePlan, n)
	for k := range plans {
		plans[k] = m.planTable(k)
	}
	oursMoved, theirsMoved := m.moved()
	primOurs := oursMoved || !theirsMoved
	prim, sec := m.ours, m.theirs
	if !primOurs {
		prim, sec = sec, prim
	}
	order := mergeOrder(orderInputs{
		groups: n, prim: prim.order, sec: sec.order, primOurs: primOurs,
		inBase: m.base.has, inSec: sec.has,
		primIndex: func(k string) int {
			if r := prim.row(k); r != nil {
				return r.pos
			}
			return -1
		},
		keepPrim: func(k string) bool { return m.changed(prim, prim.row(k), m.base.row(k)) },
		keepSec:  func(k string) bool { return m.changed(sec, sec.row(k), m.base.row(k)) },
	})
	for _, it := range order {
		p := plans[it.grp]
		p.rows = append(p.rows, m.planRow(p, it.key))
	}
	return plans
}

// moved reports whether each side moved rows that all three sides have:
// put one in another order, or another table.
func (m *merger) moved() (ours, theirs bool) {
	lastO, lastT := -1, -1
	for _, it := range m.base.order {
		o, t := m.ours.row(it.key), m.theirs.row(it.key)
		if o == nil || t == nil {
			continue
		}
		ours = ours || o.pos < lastO || o.tbl != it.grp
		theirs = theirs || t.pos < lastT || t.tbl != it.grp
		lastO, lastT = o.pos, t.pos
	}
	return ours, theirs
}

// baseTable is base's table k, nil when base has no task table.
func (m *merger) baseTable(k int) *mtable {
	if k < len(m.base.tables) {
		return m.base.tables[k]
	}
	return nil
}

// planTable merges the columns of table k and writes its header lines.
func (m *merger) planTable(k int) *tablePlan {
	bt, ot, tt := m.baseTable(k), m.ours.tables[k], m.theirs.tables[k]
	var bcols []string
	if bt != nil {
		bcols = bt.cols
	}
	items := func(cols []string) []seqItem {
		out := make([]seqItem, len(cols))
		for i, c := range cols {
			out[i] = seqItem{key: c}
		}
		return out
	}
	inBase := func(c string) bool { return slices.Contains(bcols, c) }
	inAll := func(c string) bool { return inBase(c) && slices.Contains(ot.cols, c) && slices.Contains(tt.cols, c) }
	primOurs := !theirsLeads(items(bcols), items(ot.cols), items(tt.cols), inAll)
	prim, sec := m.ours, m.theirs
	if !primOurs {
		prim, sec = sec, prim
	}
	pcols, scols := prim.tables[k].cols, sec.tables[k].cols
	order := mergeOrder(orderInputs{
		groups: 1, inBase: inBase, prim: items(pcols), sec: items(scols), primOurs: primOurs,
		inSec:     func(c string) bool { return slices.Contains(scols, c) },
		primIndex: func(c string) int { return slices.Index(pcols, c) },
		// A column one side deleted stays when the other changed a cell
		// of it: no text is lost to a merge.
		keepPrim: func(c string) bool { return m.columnChanged(prim, k, c) },
		keepSec:  func(c string) bool { return m.columnChanged(sec, k, c) },
	})
	p := &tablePlan{eol: ot.eol}
	for _, it := range order {
		p.cols = append(p.cols, it.key)
	}
	p.header, p.align = m.headerLines(k, p.cols)
	p.sameCols = bt != nil && slices.Equal(bt.cols, p.cols) && slices.Equal(ot.cols, p.cols) && slices.Equal(tt.cols, p.cols)
	return p
}

// columnChanged reports whether side v has text in column c of table k
// that base does not.
func (m *merger) columnChanged(v *mver, k int, c string) bool {
	for i, it := range v.order { // order and all are parallel
		if it.grp != k {
			continue
		}
		x, _ := v.cell(&v.all[i], c)
		b, _ := m.base.cell(m.base.row(it.key), c)
		if x != b {
			return true
		}
	}
	return false
}

// headerLines returns the header and alignment lines of merged table k with
// columns cols: a side's own lines when they have these columns (the side
// that changed them), else ours' with the other columns put in.
func (m *merger) headerLines(k int, cols []string) (string, string) {
	bt, ot, tt := m.baseTable(k), m.ours.tables[k], m.theirs.tables[k]
	lines := func(v *mver, t *mtable) (string, string) {
		h := t.t.header
		ds, de, _ := lineAt(v.d.src, nextLine(v.d.src, h.start))
		return v.d.str[h.start:h.end], v.d.str[ds:de]
	}
	oh, oa := lines(m.ours, ot)
	th, ta := lines(m.theirs, tt)
	var bh, ba string
	if bt != nil {
		bh, ba = lines(m.base, bt)
	}
	pick := func(o, t, b string, oSame, tSame bool) (string, bool) {
		switch {
		case oSame && tSame && (o == b || o == t):
			return t, true
		case oSame && tSame:
			return o, true
		case oSame:
			return o, true
		case tSame:
			return t, true
		}
		return "", false
	}
	oSame, tSame := slices.Equal(ot.cols, cols), slices.Equal(tt.cols, cols)
	h, okH := pick(oh, th, bh, oSame, tSame)
	a, okA := pick(oa, ta, ba, oSame, tSame)
	if okH && okA {
		return h, a
	}
	// Ours' lines with the other columns put in: names and alignments
	// from the side that has them.
	names := make([]string, len(cols))
	aligns := make([]string, len(cols))
	for i, c := range cols {
		names[i], aligns[i] = c, "---"
		for _, s := range []struct {
			v *mver
			t *mtable
		}{{m.ours, ot}, {m.theirs, tt}} {
			if j, ok := s.t.idx[c]; ok {
				names[i] = s.t.t.cols[j].name
				ds, de, _ := lineAt(s.v.d.src, nextLine(s.v.d.src, s.t.t.header.start))
				if cells := splitRow(s.v.d.src, ds, de, len(s.t.cols)); j < len(cells) {
					aligns[i] = s.v.d.str[cells[j].text.start:cells[j].text.end]
				}
				break
			}
		}
	}
	src := m.ours.d.str
	hs := ot.t.header
	hl := splitSlots(src, hs.start, hs.end, splitRow(m.ours.d.src, hs.start, hs.end, len(ot.cols)))
	ds, de, _ := lineAt(m.ours.d.src, nextLine(m.ours.d.src, hs.start))
	al := splitSlots(src, ds, de, splitRow(m.ours.d.src, ds, de, len(ot.cols)))
	return hl.relayout(ot.cols, cols, names), al.relayout(ot.cols, cols, aligns)
}

// planRow merges the row of key into table p.
func (m *merger) planRow(p *tablePlan, key string) rowPlan {
	rb, ro, rt := m.base.row(key), m.ours.row(key), m.theirs.row(key)
	switch {
	case ro != nil && rt != nil:
		if ro.keep {
			e := &expectRow{raw: m.ours.raw(ro)}
			return rowPlan{text: e.raw, ours: e, theirs: e}
		}
		if rb != nil && p.sameCols {
			// Most rows: one side at most changed them. The row is that
			// side's, byte for byte.
			switch or, tr, br := m.ours.raw(ro), m.theirs.raw(rt), m.base.raw(rb); {
			case or == br || or == tr:
				e := &expectRow{raw: tr}
				return rowPlan{text: tr, ours: e, theirs: e}
			case tr == br:
				e := &expectRow{raw: or}
				return rowPlan{text: or, ours: e, theirs: e}
			}
		}
		vals, oursVals, theirsVals, cells := m.mergeCells(p, rb, ro, rt)
		if len(cells) == 0 {
			e := &expectRow{id: ro.id, vals: vals}
			return rowPlan{text: m.render(m.ours, ro, p.cols, vals), ours: e, theirs: e}
		}
		c := MergeConflict{Kind: ConflictCells, ID: ro.id, Cells: cells}
		if rb == nil {
			// Two rows that only share their new ID: each as its side
			// wrote it, nothing of one put into the other.
			c = MergeConflict{Kind: ConflictAddedBoth, ID: ro.id}
			oursVals, theirsVals = m.ownVals(m.ours, ro, p.cols), m.ownVals(m.theirs, rt, p.cols)
		}
		return m.conflict(p, c, ro, rt, oursVals, theirsVals)
	case ro != nil:
		vals := m.ownVals(m.ours, ro, p.cols)
		if rb != nil && !ro.keep {
			return m.conflict(p, MergeConflict{Kind: ConflictDeleted, ID: ro.id, DeletedBy: "theirs"}, ro, nil, vals, nil)
		}
		return m.plain(m.ours, ro, p, vals)
	default:
		vals := m.ownVals(m.theirs, rt, p.cols)
		if rb != nil && !rt.keep {
			return m.conflict(p, MergeConflict{Kind: ConflictDeleted, ID: rt.id, DeletedBy: "ours"}, nil, rt, nil, vals)
		}
		return m.plain(m.theirs, rt, p, vals)
	}
}

// plain is a row one side has alone (new there).
func (m *merger) plain(v *mver, r *mrow, p *tablePlan, vals []string) rowPlan {
	if r.keep {
		e := &expectRow{raw: v.raw(r)}
		return rowPlan{text: e.raw, ours: e, theirs: e}
	}
	e := &expectRow{id: r.id, vals: vals}
	return rowPlan{text: m.render(v, r, p.cols, vals), ours: e, theirs: e}
}

// ownVals are row r's texts for the columns cols ("" for a column its
// table lacks).
func (m *merger) ownVals(v *mver, r *mrow, cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i], _ = v.cell(r, c)
	}
	return out
}

// mergeCells merges the cells of a row both sides have. A side whose
// table lacks a column did not change it.
func (m *merger) mergeCells(p *tablePlan, rb, ro, rt *mrow) (vals, oursVals, theirsVals []string, conflicts []CellConflict) {
	vals = make([]string, len(p.cols))
	var at []int // the columns in conflict
	var os, ts []string
	for i, c := range p.cols {
		b, _ := m.base.cell(rb, c)
		o, ok := m.ours.cell(ro, c)
		if !ok {
			o = b
		}
		t, ok := m.theirs.cell(rt, c)
		if !ok {
			t = b
		}
		v, ok := mergeCell(c, b, o, t)
		if ok {
			vals[i] = v
			continue
		}
		vals[i] = o
		at, os, ts = append(at, i), append(os, o), append(ts, t)
		conflicts = append(conflicts, CellConflict{Column: m.columnName(c), Ours: o, Theirs: t})
	}
	if len(at) == 0 {
		return vals, nil, nil, nil
	}
	// Each side's version: the merged row with that side's texts where
	// the two conflict.
	oursVals, theirsVals = slices.Clone(vals), slices.Clone(vals)
	for j, i := range at {
		oursVals[i], theirsVals[i] = os[j], ts[j]
	}
	return vals, oursVals, theirsVals, conflicts
}

// columnName is the header name of column key c.
func (m *merger) columnName(c string) string {
	if name, ok := strings.CutPrefix(c, "="); ok {
		return name
	}
	for _, v := range []*mver{m.ours, m.theirs} {
		for _, t := range v.tables {
			if j, ok := t.idx[c]; ok {
				return t.t.cols[j].name
			}
		}
	}
	return c
}

// render writes row r of side v with the texts vals for columns cols.
func (m *merger) render(v *mver, r *mrow, cols, vals []string) string {
	t := v.tables[r.tbl]
	if slices.Equal(t.cols, cols) {
		same := true
		for i := range cols {
			if v.d.cellAt(r.r, i) != vals[i] {
				same = false
				break
			}
		}
		if same {
			return v.raw(r)
		}
	}
	l := splitSlots(v.d.str, int(r.r.span.start), int(r.r.span.end), r.r.cells())
	return l.relayout(t.cols, cols, vals)
}

// conflict writes git's markers around the two versions of one row (either
// may be absent: a deleted row).
func (m *merger) conflict(p *tablePlan, c MergeConflict, ro, rt *mrow, oursVals, theirsVals []string) rowPlan {
	size := m.o.MarkerSize
	label := "ours"
	if c.Kind == ConflictAddedBoth {
		label += " (" + c.ID + " " + AddedBothNote + ")"
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("<", size) + " " + label + p.eol)
	var pl rowPlan
	if ro != nil {
		b.WriteString(m.render(m.ours, ro, p.cols, oursVals) + p.eol)
		pl.ours = &expectRow{id: ro.id, vals: oursVals}
	}
	b.WriteString(strings.Repeat("=", size) + p.eol)
	if rt != nil {
		b.WriteString(m.render(m.theirs, rt, p.cols, theirsVals) + p.eol)
		pl.theirs = &expectRow{id: rt.id, vals: theirsVals}
	}
	b.WriteString(strings.Repeat(">", size) + " theirs")
	pl.text, pl.conflict = b.String(), true
	m.conflicts = append(m.conflicts, c)
	return pl
}

// writeTable writes a merged table; the offsets of its conflicts' blocks
// are kept for their line numbers.
func (m *merger) writeTable(p *tablePlan) {
	m.out.WriteString(p.header)
	m.out.WriteString(p.eol)
	m.out.WriteString(p.align)
	for _, r := range p.rows {
		m.out.WriteString(p.eol)
		if r.conflict {
			m.conflictAt = append(m.conflictAt, m.out.Len())
		}
		m.out.WriteString(r.text)
	}
}

// verify reads the merged bytes back, both sides' views of them when they
// hold conflicts: every table with the merged columns and rows, every row
// with its merged cells. It returns what differs ("" when nothing).
func (m *merger) verify(out []byte, plans []*tablePlan) string {
	views := []bool{true}
	if len(m.conflicts) > 0 {
		views = append(views, false)
	}
	for _, ours := range views {
		src := out
		if len(m.conflicts) > 0 || len(ConflictBlocks(out)) > 0 {
			src = ResolveConflicts(out, func(c ConflictBlock) (string, bool) {
				if ours {
					return c.Ours, true
				}
				return c.Theirs, true
			})
		}
		v, _ := newMver(src)
		if len(v.tables) != len(plans) {
			return "the merged file would not read back with its task tables"
		}
		next := make([]int, len(plans))
		for k, p := range plans {
			if !slices.Equal(v.tables[k].cols, p.cols) {
				return "a merged table would not read back with its columns"
			}
			for _, rp := range p.rows {
				e := rp.theirs
				if ours {
					e = rp.ours
				}
				if e == nil {
					continue
				}
				r := v.rowAt(k, next[k])
				next[k]++
				if r == nil || !v.reads(r, e) {
					return "a merged row would not read back as merged"
				}
			}
		}
		for k := range plans {
			if v.rowAt(k, next[k]) != nil {
				return "the merged file would read back with more rows than merged"
			}
		}
	}
	return ""
}

// rowAt returns the i-th row of table k, nil past the end.
func (v *mver) rowAt(k, i int) *mrow {
	rows := v.tables[k].t.rows
	if i >= len(rows) {
		return nil
	}
	return v.byRow(rows[i])
}

func (v *mver) byRow(r *row) *mrow {
	if r.unreadable == 0 && r.id != "" {
		if mr := v.row(r.id); mr != nil && mr.r == r {
			return mr
		}
	}
	if v.byPtr == nil { // a duplicated or unreadable row: rare
		v.byPtr = make(map[*row]*mrow, len(v.all))
		for i := range v.all {
			v.byPtr[v.all[i].r] = &v.all[i]
		}
	}
	return v.byPtr[r]
}

// reads reports whether row r reads as e.
func (v *mver) reads(r *mrow, e *expectRow) bool {
	if e.vals == nil {
		return v.raw(r) == e.raw
	}
	if r.keep {
		return false
	}
	if r.id != e.id || int(r.r.nc) != len(e.vals) {
		return false
	}
	for i, want := range e.vals {
		if v.d.cellAt(r.r, i) != want {
			return false
		}
	}
	return true
}
