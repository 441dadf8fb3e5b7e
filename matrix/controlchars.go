package matrix

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/agenterr"
)

// MaxCellBytes bounds one value written into a cell (a description, an extra
// column): the matrix is a table people read, and a row of megabytes makes
// every tool that reads it slow. Longer text belongs in the task README.
const MaxCellBytes = 64 << 10

// checkCellValue refuses a value that would damage the matrix: a control
// character (a NUL makes the file binary to git; the others are invisible in
// a table and break terminals), or more than MaxCellBytes. Line breaks and
// tabs are allowed: a line break becomes a space (see escapeCell).
func checkCellValue(field, v string) error {
	if len(v) > MaxCellBytes {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: field, Reason: fmt.Sprintf("is %d bytes, over the limit of %d bytes for a cell; put the long text in the task README and keep a summary in the row", len(v), MaxCellBytes)}
	}
	if i, r := firstControl(v); i >= 0 {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: field, Reason: fmt.Sprintf("holds the control character %U (%s) at byte %d; control characters are refused in the matrix (a NUL makes it a binary file to git): remove it", r, controlName(r), i)}
	}
	return nil
}

// firstControl returns the byte offset and rune of the first control
// character of s other than tab, line feed and carriage return: C0, DEL, and
// the C1 range U+0080-U+009F. -1 when there is none.
func firstControl(s string) (int, rune) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			return i, rune(c)
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return i, r
		}
	}
	return -1, 0
}

var controlNames = map[rune]string{0: "NUL", 7: "BEL", 8: "BS", 0x0b: "VT", 0x0c: "FF", 0x1b: "ESC", 0x7f: "DEL"}

func controlName(r rune) string {
	if n, ok := controlNames[r]; ok {
		return n
	}
	if r >= 0x80 {
		return "C1 control"
	}
	return "control"
}

// maxControlDiagnostics bounds the control characters validate names one
// by one; the last diagnostic counts the rest.
const maxControlDiagnostics = 20

// controlDiagnostics reports the control characters of the file, anywhere
// in it (checkCellValue keeps agentinfra from writing them; people and
// other tools may): a NUL makes git treat the matrix as binary, so its
// diffs and merges stop working, and the others are invisible in a table.
func (d *Doc) controlDiagnostics() []Diagnostic {
	var out []Diagnostic
	n := 0
	for off := nextControl(d.src, 0); off >= 0; off = nextControl(d.src, off+1) {
		n++
		if n > maxControlDiagnostics {
			continue
		}
		r, _ := utf8.DecodeRune(d.src[off:])
		if d.src[off] < 0x80 {
			r = rune(d.src[off])
		}
		out = append(out, d.diagAt(off, SeverityError, "control character %U (%s): control characters have no place in the matrix (a NUL makes git treat it as a binary file); remove it", r, controlName(r)))
	}
	if n > maxControlDiagnostics {
		last := &out[len(out)-1]
		last.Message += fmt.Sprintf(" (and %d more control characters after this one)", n-maxControlDiagnostics)
	}
	return out
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// nextControl returns the offset of the first control character of src at
// or after from (see firstControl), or -1. It reads eight bytes at a time:
// a word of printable ASCII (no byte below 0x20, none at 0x7F or above) is
// skipped whole, so a 10,000-row matrix costs a fraction of a millisecond.
func nextControl(src []byte, from int) int {
	i := from
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		low := (x - 0x20*lows) & ^x & highs // some byte < 0x20
		high := (x | (x + lows)) & highs    // some byte >= 0x7f
		if low|high == 0 {
			continue
		}
		if j := controlIn(src, i, i+8); j >= 0 {
			return j
		}
	}
	return controlIn(src, i, len(src))
}

// controlIn is firstControl over src[from:to] (a C1 control may end past to).
func controlIn(src []byte, from, to int) int {
	for i := from; i < to; i++ {
		c := src[i]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			return i
		case c == 0xc2 && i+1 < len(src) && src[i+1] >= 0x80 && src[i+1] <= 0x9f:
			return i
		}
	}
	return -1
}

// fieldName is the agenterr.Error Field of a column: the domain name of a
// canonical one ("description", "priority"), else its header.
func fieldName(canonical, header string) string {
	switch canonical {
	case "":
		return header
	case ColPri:
		return "priority"
	case ColDiff:
		return "difficulty"
	}
	return strings.ToLower(canonical)
}
