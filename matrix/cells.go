package matrix

import "strings"

// span is a half-open byte range [start, end) of the source.
type span struct{ start, end int }

// cellSpan is one cell of a row: raw is between the pipes, text is raw without
// surrounding white space. Offsets are int32 to halve the memory of the cell
// slab of a large matrix (a matrix is far below 2 GiB).
type cellSpan struct {
	raw  span32
	text span32
}

type span32 struct{ start, end int32 }

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// splitRow splits the line src[start:end] into cells the way goldmark's GFM
// table does: outer pipes are optional, and a pipe preceded by a backslash does
// not end a cell.
func splitRow(src []byte, start, end, hint int) []cellSpan {
	return appendCells(make([]cellSpan, 0, hint), src, start, end)
}

// appendCells appends the cells of src[start:end] to dst.
func appendCells(dst []cellSpan, src []byte, start, end int) []cellSpan {
	for start < end && isSpace(src[start]) {
		start++
	}
	for end > start && isSpace(src[end-1]) {
		end--
	}
	if start < end && src[start] == '|' {
		start++
	}
	if end > start && src[end-1] == '|' {
		end--
	}
	cells := dst
	pos := start
	for pos < end {
		closure := pos
		for closure < end {
			if src[closure] == '|' && (closure == 0 || src[closure-1] != '\\') {
				break
			}
			closure++
		}
		cells = append(cells, makeCell(src, pos, closure))
		pos = closure + 1
	}
	return cells
}

func makeCell(src []byte, start, end int) cellSpan {
	ts, te := start, end
	for ts < te && isSpace(src[ts]) {
		ts++
	}
	for te > ts && isSpace(src[te-1]) {
		te--
	}
	return cellSpan{raw: span32{int32(start), int32(end)}, text: span32{int32(ts), int32(te)}}
}

// unescapeCell turns a cell's raw text into its value: `\|` becomes `|`;
// everything else (inline code, links, emoji) is kept as written.
func unescapeCell(s string) string {
	if strings.Contains(s, `\|`) {
		s = strings.ReplaceAll(s, `\|`, `|`)
	}
	return s
}

// escapeCell makes a value safe to write into a cell: no line breaks (which
// would split the row) and no bare pipes (which would split the cell).
func escapeCell(v string) string {
	v = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(v)
	return strings.TrimSpace(v)
}
