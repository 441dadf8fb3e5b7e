package termsafe

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// A long text streamed through Copy shows as the whole of it would: a
// character split between two reads (one byte at a time, the harshest) is
// kept whole, an escape is made once.
func TestCopyShowsAStreamAsTheWhole(t *testing.T) {
	in := strings.Repeat("é \u202e \x1b[2J ok\n", 3000) + "tail é"
	for _, show := range []func(string) string{Text, Visible} {
		var out bytes.Buffer
		if _, err := Copy(&out, iotest.OneByteReader(strings.NewReader(in)), show); err != nil {
			t.Fatal(err)
		}
		if out.String() != show(in) {
			t.Fatalf("streamed %d bytes, whole %d bytes: they differ", out.Len(), len(show(in)))
		}
	}
}
