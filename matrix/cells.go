package matrix

import (
	"bytes"
	"strings"
)

// span is a half-open byte range [start, end) of the source.
type span struct{ start, end int }

// cellSpan is one cell of a row: its text, without the white space around it.
// An all-blank cell has an empty text at the pipe that closes it. Offsets are
// int32 and the padding is not stored: the cell slab of a large matrix is most
// of its parse's memory (a matrix is far below 2 GiB).
type cellSpan struct {
	text span32
}

type span32 struct{ start, end int32 }

// cells returns the row's cells (see row.c0).
func (r *row) cells() []cellSpan { return r.tbl.slab[r.c0 : r.c0+r.nc : r.c0+r.nc] }

func (s span32) wide() span { return span{int(s.start), int(s.end)} }

func narrow(s span) span32 { return span32{int32(s.start), int32(s.end)} }

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// splitRow splits the line src[start:end] into cells the way goldmark's GFM
// table does: outer pipes are optional, and a pipe preceded by a backslash does
// not end a cell.
func splitRow(src []byte, start, end, hint int) []cellSpan {
	return appendCells(make([]cellSpan, 0, hint), src, start, end)
}

// appendCells appends the cells of src[start:end] to dst. Every row of a
// matrix is split here: it jumps from pipe to pipe with bytes.IndexByte,
// where a byte loop was a quarter of a large matrix's parse. (A SWAR scan of
// eight bytes at a time measured the same: cells are short.)
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
	for pos := start; pos < end; {
		closure := end
		for from := pos; from < end; {
			i := bytes.IndexByte(src[from:end], '|')
			if i < 0 {
				break
			}
			c := from + i
			if c == 0 || src[c-1] != '\\' {
				closure = c
				break
			}
			from = c + 1
		}
		dst = append(dst, makeCell(src, pos, closure))
		pos = closure + 1
	}
	return dst
}

func makeCell(src []byte, start, end int) cellSpan {
	ts, te := start, end
	// A lone CR is a line ending to CommonMark, never part of a value.
	for ts < te && (isSpace(src[ts]) || src[ts] == '\r') {
		ts++
	}
	for te > ts && (isSpace(src[te-1]) || src[te-1] == '\r') {
		te--
	}
	return cellSpan{text: span32{int32(ts), int32(te)}}
}

// unescapeCell turns a cell's raw text into its value: `\|` becomes `|`;
// everything else (inline code, links, emoji) is kept as written.
func unescapeCell(s string) string {
	if strings.IndexByte(s, '\\') >= 0 && strings.Contains(s, `\|`) { // IndexByte: most cells have no backslash
		s = strings.ReplaceAll(s, `\|`, `|`)
	}
	return s
}

// escapeCell makes a value safe to write into a cell: no line breaks (which
// would split the row: they are written as <br>, see EncodeText) and no bare
// pipes (which would split the cell).
func escapeCell(v string) string { return EncodeText(v) }
