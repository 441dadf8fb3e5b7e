package matrix

import (
	"encoding/binary"
	"math/bits"
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

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// splitRow splits the line src[start:end] into cells the way goldmark's GFM
// table does: outer pipes are optional, and a pipe preceded by a backslash does
// not end a cell.
func splitRow(src []byte, start, end, hint int) []cellSpan {
	return appendCells(make([]cellSpan, 0, hint), src, start, end)
}

// appendCells appends the cells of src[start:end] to dst. Every row of a
// matrix is split here, and most cells are a few bytes long: pipes are found
// eight bytes at a time (nextPipe), where a byte loop was a quarter of a
// large matrix's parse and bytes.IndexByte costs more per call than it saves.
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
		closure := nextPipe(src, pos, end)
		for closure < end && closure > 0 && src[closure-1] == '\\' {
			closure = nextPipe(src, closure+1, end)
		}
		dst = append(dst, makeCell(src, pos, closure))
		pos = closure + 1
	}
	return dst
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	pipes = '|' * ones
)

// nextPipe returns the index of the first '|' in src[from:end], or end.
func nextPipe(src []byte, from, end int) int {
	for ; from+8 <= end; from += 8 {
		x := binary.LittleEndian.Uint64(src[from:]) ^ pipes
		// The lowest high bit set is the first zero byte of x (bytes above
		// it can be false positives, never the ones below).
		if m := (x - ones) & ^x & highs; m != 0 {
			return from + bits.TrailingZeros64(m)/8
		}
	}
	for ; from < end; from++ {
		if src[from] == '|' {
			return from
		}
	}
	return end
}

func makeCell(src []byte, start, end int) cellSpan {
	ts, te := start, end
	for ts < te && isSpace(src[ts]) {
		ts++
	}
	for te > ts && isSpace(src[te-1]) {
		te--
	}
	return cellSpan{text: span32{int32(ts), int32(te)}}
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
