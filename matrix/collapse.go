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
	kept := 0 // source offset up to which src is copied to red
	for off := 0; off < len(src); {
		if src[off] != '|' || !plainPipeLine(src, off) {
			off = nextLine(src, off)
			continue
		}
		start := off
		first := nextLine(src, off)
		end, n := first, 1
		for end < len(src) && src[end] == '|' && plainPipeLine(src, end) {
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

// plainPipeLine reports whether the line at off has no '>' and no CR other
// than the one before its LF.
func plainPipeLine(src []byte, off int) bool {
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return false // the last line without LF: leave it to goldmark
	}
	end := off + i
	line := src[off:end]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return bytes.IndexByte(line, '>') < 0 && bytes.IndexByte(line, '\r') < 0
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

// expand appends the lines of the run starting at lineStart (in the source),
// or reports false when no run starts there.
func (c *collapsed) expand(lines []span, lineStart int) ([]span, bool) {
	end, ok := c.runs[lineStart]
	if !ok {
		return lines, false
	}
	for off := lineStart; off < end; {
		s, e := lineBounds(c.src, off)
		lines = append(lines, span{s, e})
		off = nextLine(c.src, off)
	}
	return lines, true
}
