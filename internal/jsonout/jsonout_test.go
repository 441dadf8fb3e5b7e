package jsonout

import (
	"strings"
	"testing"
)

func TestWriteKeepsMarkupCharacters(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, map[string]string{"response": "<b> & </b>"}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\n  \"response\": \"<b> & </b>\"\n}\n" {
		t.Errorf("got %q", b.String())
	}
	m, err := Marshal([]int{1})
	if err != nil || string(m) != "[\n  1\n]\n" {
		t.Errorf("Marshal = %q, %v", m, err)
	}
}
