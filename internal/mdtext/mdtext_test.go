package mdtext

import (
	"strings"
	"testing"
)

func TestFenceOutlivesEveryBacktickRun(t *testing.T) {
	for _, tc := range []struct{ text, lang, want string }{
		{"plain\n", "go", "```go\nplain\n```\n"},
		{"no newline", "", "```\nno newline\n```\n"},
		{"", "text", "```text\n\n```\n"},
		{"a ```` b\n", "md", "`````md\na ```` b\n`````\n"},
		{"keeps\n\n", "", "```\nkeeps\n\n```\n"},
	} {
		if got := Fence(tc.text, tc.lang); got != tc.want {
			t.Errorf("Fence(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestShortenSqueezesAndCutsOnRunes(t *testing.T) {
	if got := Shorten("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("got %q", got)
	}
	if got := Shorten(strings.Repeat("é", 20), 5); got != "éééé…" {
		t.Errorf("got %q", got)
	}
}

func TestFieldAndTrim(t *testing.T) {
	var b strings.Builder
	Field(&b, "Agents", "")
	Field(&b, "Description", "two\nlines")
	if b.String() != "- Agents: -\n- Description: two lines\n" {
		t.Errorf("got %q", b.String())
	}
	if got := TrimBlankLines("\r\n\n  x\r\n y \n\n"); got != "  x\n y " {
		t.Errorf("got %q", got)
	}
	if Or(" ", "-") != "-" || Or("v", "-") != "v" {
		t.Error("Or")
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"one line":                             "one line",
		"\n\nShow a toast.\n\n```ts\nx\n```\n": "Show a toast. …",
		"  spaced   out  ":                     "spaced out",
		"last\n\n":                             "last",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
