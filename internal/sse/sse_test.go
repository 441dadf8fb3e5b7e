package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// What Write writes, Read reads back: ids, types, data of several lines;
// comments are skipped and a stream that ends is io.ErrUnexpectedEOF.
func TestWriteThenRead(t *testing.T) {
	var b bytes.Buffer
	Write(&b, "7", "audit", []byte(`{"seq":7}`))
	b.WriteString(": ping\n\n")
	Write(&b, "", "hello", []byte("two\nlines"))
	var got []Event
	err := Read(strings.NewReader(b.String()), 1<<10, func(e Event) (bool, error) {
		e.Data = append([]byte(nil), e.Data...)
		got = append(got, e)
		return true, nil
	})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("end of stream: %v", err)
	}
	if len(got) != 2 || got[0].ID != "7" || got[0].Type != "audit" || string(got[0].Data) != `{"seq":7}` ||
		got[1].ID != "" || got[1].Type != "hello" || string(got[1].Data) != "two\nlines" {
		t.Fatalf("read %+v", got)
	}
}
