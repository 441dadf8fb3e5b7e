// Package mdtext holds the small text helpers that the Markdown agentinfra
// writes (prompts, task context, handoffs, tracking notes) and its one-line
// messages share: one definition each, so every output squeezes, cuts and
// fences text the same way. It knows nothing of tasks or workspaces.
package mdtext

import (
	"fmt"
	"strings"
)

// OneLine collapses every run of whitespace (newlines included) into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FirstLine is the first non-blank line of s, trimmed, with " …" when more
// text follows: a title for text that goes on over several lines (a code
// block squeezed onto one line would read as nonsense).
func FirstLine(s string) string {
	s = TrimBlankLines(s)
	first, rest, more := strings.Cut(s, "\n")
	first = OneLine(first)
	if more && strings.TrimSpace(rest) != "" {
		return first + " …"
	}
	return first
}

// Shorten is OneLine cut to at most n runes, the cut marked with "…".
func Shorten(s string, n int) string {
	s = OneLine(s)
	r := []rune(s)
	if n > 0 && len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Or returns s, or def when s is empty or blank.
func Or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// Fence wraps text in a fenced code block whose fence (at least three
// backticks) is longer than any backtick run inside text, so no content can
// close it early. The block ends with a newline; text's own final newline is
// not doubled.
func Fence(text, lang string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + lang + "\n" + strings.TrimSuffix(text, "\n") + "\n" + fence + "\n"
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// TrimBlankLines drops the blank lines at the start and end of s (CRLF read
// as LF); the lines between are kept as they are.
func TrimBlankLines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	start, end := 0, len(lines)
	for start < end && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

// Field writes one "- Key: value" line, the value on one line ("-" when empty).
func Field(b *strings.Builder, key, value string) {
	fmt.Fprintf(b, "- %s: %s\n", key, Or(OneLine(value), "-"))
}

// Plural is one when n is 1, else many: "1 table", "2 tables" (the count
// is the caller's to print).
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
