package matrix

import (
	"bytes"
	"sync"
)

// lineIndex maps byte offsets to 1-based line numbers. A clean matrix needs
// a line number only for each table's header, so none is built up front:
// lines are counted on from the last offset asked for while the offsets go
// forward, and the full index of line starts is built only when one goes
// back. A Doc may be read from several goroutines (a cached matrix), hence
// the lock.
type lineIndex struct {
	src    []byte
	mu     sync.Mutex
	starts []int // every line's start, once an offset went back
	at     int   // an offset on line atLine, where counting goes on
	atLine int
}

func newLineIndex(src []byte) *lineIndex { return &lineIndex{src: src, atLine: 1} }

func (li *lineIndex) line(off int) int {
	li.mu.Lock()
	defer li.mu.Unlock()
	if li.starts == nil && off >= li.at {
		li.atLine += bytes.Count(li.src[li.at:off], []byte{'\n'})
		li.at = off
		return li.atLine
	}
	if li.starts == nil {
		li.starts = lineStarts(li.src)
	}
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

// lineStart returns the start of the line holding off.
func (li *lineIndex) lineStart(off int) int {
	return bytes.LastIndexByte(li.src[:off], '\n') + 1
}

func lineStarts(src []byte) []int {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		starts = append(starts, off)
	}
	return starts
}
