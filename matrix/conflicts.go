package matrix

import (
	"bytes"
	"strings"
)

// Conflict markers: what a merge that could not decide left in the file,
// git's way (a line merge) or the merge driver's (one row between the
// markers). Readers find them before they parse: a `=======` line ends a
// table's paragraph (CommonMark reads it as a heading underline), so a
// table with a conflict in it no longer reads as one table.

// ConflictBlock is one conflict in a file: the lines from <<<<<<< to >>>>>>>.
type ConflictBlock struct {
	// Line and EndLine are the lines of the <<<<<<< and >>>>>>> markers.
	Line, EndLine int
	// OursLabel and TheirsLabel are the texts after the markers.
	OursLabel, TheirsLabel string
	// Ours, Base and Theirs are the sections' lines, line endings included
	// (Base only in git's diff3 style, after a ||||||| marker).
	Ours, Base, Theirs string
	// start and end are the block's bytes: the start of its first line to
	// the start of the line after it.
	start, end int
	// sections' offsets: ours [oursAt, oursAt+len(Ours)), theirs likewise
	oursAt, theirsAt int
}

// hasMarkerStart is a fast look for a line that opens a conflict.
func hasMarkerStart(src []byte) bool {
	return bytes.HasPrefix(src, []byte("<<<<<<<")) || bytes.Contains(src, []byte("\n<<<<<<<"))
}

// markerLine reports whether line (without its ending) is a marker of c
// repeated n times (n == 0: at least 7), alone or followed by a space and a
// label; it returns the run's length and the label.
func markerLine(line []byte, c byte, n int) (int, string, bool) {
	run := 0
	for run < len(line) && line[run] == c {
		run++
	}
	if run < 7 || n > 0 && run != n {
		return 0, "", false
	}
	rest := line[run:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	return run, strings.TrimSpace(string(rest)), true
}

// ConflictBlocks returns the conflicts of src, in file order. A block
// that never closes is none.
func ConflictBlocks(src []byte) []ConflictBlock {
	if !hasMarkerStart(src) {
		return nil
	}
	var out []ConflictBlock
	var cur ConflictBlock
	state, size := 0, 0 // 0: outside; 1: ours; 2: base; 3: theirs
	sectionAt := 0
	lineNo := 0
	for off := 0; off < len(src); {
		ls, le, next := lineAt(src, off)
		lineNo++
		line := src[ls:le]
		if n, label, ok := markerLine(line, '<', 0); ok {
			cur = ConflictBlock{Line: lineNo, OursLabel: label, start: ls, oursAt: next}
			state, size = 1, n
			off = next
			continue
		}
		switch state {
		case 1:
			if _, _, ok := markerLine(line, '|', size); ok {
				cur.Ours = string(src[cur.oursAt:ls])
				state, sectionAt = 2, next
			} else if bytes.Equal(line, bytes.Repeat([]byte{'='}, size)) {
				cur.Ours = string(src[cur.oursAt:ls])
				state, cur.theirsAt = 3, next
			}
		case 2:
			if bytes.Equal(line, bytes.Repeat([]byte{'='}, size)) {
				cur.Base = string(src[sectionAt:ls])
				state, cur.theirsAt = 3, next
			}
		case 3:
			if _, label, ok := markerLine(line, '>', size); ok {
				cur.Theirs = string(src[cur.theirsAt:ls])
				cur.TheirsLabel, cur.EndLine, cur.end = label, lineNo, next
				out = append(out, cur)
				state = 0
			}
		}
		off = next
	}
	return out
}

// ResolveConflicts returns src with each conflict block replaced by what
// choose returns for it (a section, say: ConflictBlock.Ours); a block
// choose returns false for stays as it is.
func ResolveConflicts(src []byte, choose func(ConflictBlock) (string, bool)) []byte {
	blocks := ConflictBlocks(src)
	if len(blocks) == 0 {
		return src
	}
	var b bytes.Buffer
	b.Grow(len(src))
	pos := 0
	for _, c := range blocks {
		b.Write(src[pos:c.start])
		text, ok := choose(c)
		if !ok {
			text = string(src[c.start:c.end])
		}
		if ok && c.end == len(src) && !bytes.HasSuffix(src, []byte("\n")) {
			// The >>>>>>> line ended the file without a line ending.
			text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
		}
		b.WriteString(text)
		pos = c.end
	}
	b.Write(src[pos:])
	return b.Bytes()
}
