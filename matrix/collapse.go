package matrix

import (
	"bytes"
	"sort"
)

// goldmark's block parser visits every line, and a large matrix is thousands
// of table lines: most of its parse time and memory. A line that starts with
// '|' can neither open a block nor, holding no '>' (every HTML-block end
// marker has one) and no bare CR (a line ending to CommonMark), close one. So
// in a run of such lines every line after the first takes the block role of
// the first: continuation of the same paragraph, or content of the same code
// or HTML block. collapse hands goldmark each run as its first line only;
// tableFinder puts the run back (expand), so no row is ever judged by
// anything but goldmark's view of the block it is in.

// collapseMinLines is the shortest run worth collapsing, and collapseMinBytes
// the smallest file; tests lower both to run every file through this path.
var (
	collapseMinLines = 8
	collapseMinBytes = 64 << 10
)

type chunk struct{ red, orig int } // a kept piece starts at red in the reduced text and orig in the source

type collapsed struct {
	src    []byte
	red    []byte
	chunks []chunk
	runs   map[int]int // start of a run's first line → end of the run (after its last line ending)
}

// collapseRuns returns src with long runs of '|' lines cut to their first line,
// or nil when nothing is worth cutting.
func collapseRuns(src []byte) *collapsed {
	if len(src) < collapseMinBytes {
		return nil // small files: goldmark is fast enough, keep one path simple
	}
	var c *collapsed
	p := plainLines{src: src, gt: -1, cr: -1}
	kept := 0 // source offset up to which src is copied to red
	for off := 0; off < len(src); {
		if src[off] != '|' || !p.plain(off) {
			off = nextLine(src, off)
			continue
		}
		start := off
		first := nextLine(src, off)
		end, n := first, 1
		for end < len(src) && src[end] == '|' && p.plain(end) {
			end = nextLine(src, end)
			n++
		}
		if n >= collapseMinLines && end > first {
			if c == nil {
				c = &collapsed{src: src, red: make([]byte, 0, len(src)/8), runs: map[int]int{}}
			}
			c.chunks = append(c.chunks, chunk{red: len(c.red), orig: kept})
			c.red = append(c.red, src[kept:first]...)
			c.runs[start] = end
			kept = end
		}
		off = end
	}
	if c == nil {
		return nil
	}
	c.chunks = append(c.chunks, chunk{red: len(c.red), orig: kept})
	c.red = append(c.red, src[kept:]...)
	return c
}

// plainLines tells whether lines have no '>' and no CR other than the one
// before their LF. It remembers where the next '>' and CR are, so that each
// line costs one search (for its end) instead of three: the offsets asked
// about only go forward.
type plainLines struct {
	src    []byte
	gt, cr int // the first '>' and CR at or after the last offset asked about; -1: not searched yet
}

// plain reports it for the line at off; a last line without LF is never plain
// (left to goldmark).
func (p *plainLines) plain(off int) bool {
	i := bytes.IndexByte(p.src[off:], '\n')
	if i < 0 {
		return false
	}
	end := off + i
	if end > off && p.src[end-1] == '\r' {
		end--
	}
	return nextByte(p.src, &p.gt, off, '>') >= end && nextByte(p.src, &p.cr, off, '\r') >= end
}

// nextByte returns the index of the first b at or after from (len(src) when
// none), searching only when *at, the answer for an earlier from, is before from.
func nextByte(src []byte, at *int, from int, b byte) int {
	if *at < from {
		*at = len(src)
		if i := bytes.IndexByte(src[from:], b); i >= 0 {
			*at = from + i
		}
	}
	return *at
}

func nextLine(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(src)
}

// toOrig maps an offset in the reduced text to the source.
func (c *collapsed) toOrig(red int) int {
	i := sort.Search(len(c.chunks), func(i int) bool { return c.chunks[i].red > red }) - 1
	return c.chunks[i].orig + red - c.chunks[i].red
}

// runEnd returns the end of the run starting at lineStart (after its last
// line ending), or false when no run starts there.
func (c *collapsed) runEnd(lineStart int) (int, bool) {
	end, ok := c.runs[lineStart]
	return end, ok
}
