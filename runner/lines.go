package runner

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
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

// mergeEnv builds the child's environment: the inherited one (unless clean),
// then the additions in order; a later KEY= wins.
func mergeEnv(clean bool, adds ...[]string) []string {
	var base []string
	if !clean {
		base = os.Environ()
	}
	idx := map[string]int{}
	out := make([]string, 0, len(base)+8)
	put := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			return
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		put(kv)
	}
	for _, a := range adds {
		for _, kv := range a {
			put(kv)
		}
	}
	return out
}
