package matrix

// CanonicalizeAliases rewrites every Status, Pri and Diff cell that holds an
// alias of a value, or a value in another case ("M", "medium", "wip",
// "todo"), to the value as the vocabulary spells it, and returns how many
// cells changed. Only those cells change: the rest of each line, and every
// other line, keeps its bytes. Rows broken across lines are left alone (they
// are not read as tasks until joined). `validate --fix` calls it when the
// workspace config sets matrix.canonicalize.
func (d *Doc) CanonicalizeAliases() (changed int) {
	type edit struct {
		r    *row
		line string
	}
	var edits []edit
	for _, r := range d.rows {
		values := map[int]string{}
		for _, col := range []string{ColStatus, ColPri, ColDiff} {
			i, ok := r.tbl.colIndex[col]
			if !ok || i >= len(r.cells()) {
				continue
			}
			v := d.cell(r, col)
			if v == "" || isEmptyMark(v) {
				continue
			}
			if n, err := d.vocab.Normalize(col, v); err == nil && n != v {
				values[i] = n
			}
		}
		if len(values) > 0 {
			edits = append(edits, edit{r, d.rewriteRow(r, values)})
			changed += len(values)
		}
	}
	if len(edits) == 0 {
		return 0
	}
	buf := make([]byte, 0, len(d.src))
	pos := 0
	for _, e := range edits { // d.rows is in file order
		buf = append(buf, d.src[pos:e.r.span.start]...)
		buf = append(buf, e.line...)
		pos = int(e.r.span.end)
	}
	buf = append(buf, d.src[pos:]...)
	*d = *ParseWith(buf, d.vocab)
	return changed
}
