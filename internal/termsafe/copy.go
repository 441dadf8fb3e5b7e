package termsafe

import (
	"errors"
	"io"
	"unicode/utf8"
)

// Copy streams src to dst through show (Text, Visible): a text too long to
// hold whole (a 65 MB diff), read in chunks cut on a character's boundary,
// so that a character split between two reads is judged whole.
func Copy(dst io.Writer, src io.Reader, show func(string) string) (int64, error) {
	buf := make([]byte, 64<<10)
	carry := 0 // bytes of a character begun at the end of the last read
	var n int64
	for {
		m, rerr := src.Read(buf[carry:])
		end := carry + m
		keep := 0
		if rerr == nil {
			keep = partialRune(buf[:end])
		}
		if end-keep > 0 {
			w, err := io.WriteString(dst, show(string(buf[:end-keep])))
			n += int64(w)
			if err != nil {
				return n, err
			}
		}
		copy(buf, buf[end-keep:end])
		carry = keep
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// partialRune is how many bytes at the end of b begin a character that
// needs more bytes than b holds (0 when b ends on a boundary).
func partialRune(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0 // ASCII: complete
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
