package runner

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// readLines calls fn for each line of r (without the newline). A line longer
// than max is cut to max bytes; the rest of it is skipped.
func readLines(r io.Reader, max int, fn func([]byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !cut {
				if len(long)+len(chunk) > max {
					long = append(long, chunk[:max-len(long)]...)
					cut = true
				} else {
					long = append(long, chunk...)
				}
			}
			continue
		}
		if len(chunk) > 0 || len(long) > 0 {
			line := chunk
			if len(long) > 0 || cut {
				if !cut {
					long = append(long, chunk...)
				}
				line = long
			}
			fn(bytes.TrimRight(line, "\r\n"))
		}
		long, cut = long[:0], false
		if err != nil {
			return
		}
	}
}
