// Package termsafe renders text an agent controls (a request's title,
// command, file name and diff, a prompt's text, an MCP client's name, a
// run's log) inert for a terminal. Such text printed raw can drive the
// terminal: ESC [ 2 J clears the screen and lets the text draw a fake
// request below, ESC [ 8 m hides what follows, ESC ] 0 ; … BEL retitles the
// window, ESC ] 52 ; … writes the clipboard, and a right-to-left override
// (U+202E) shows the characters after it in reverse order.
//
// What is shown as an escape, never passed through:
//   - every control character (Unicode Cc: C0 0x00–0x1F, DEL 0x7F, C1
//     U+0080–U+009F, which some terminals read as ESC [ and ESC ]) except
//     newline and tab where the context allows them (Text), as \a \b \f \r
//     \v \xNN for the C0 ones and DEL, \u00NN for the C1 ones;
//   - every format character (Unicode Cf): the bidi embeddings, overrides
//     and isolates (U+202A–U+202E, U+2066–U+2069), the marks (U+200E,
//     U+200F, U+061C), the zero-width ones (U+200B–U+200D, U+2060, U+FEFF)
//     and the tag characters (U+E0000–U+E007F) that hide text, as \uNNNN or
//     \UNNNNNNNN;
//   - the line and paragraph separators (U+2028, U+2029), which some
//     terminals and editors take for line breaks;
//   - every byte that is not part of valid UTF-8 (a lone 0x9b is CSI to a
//     terminal in an 8-bit mode), as \xNN.
//
// Everything else, printable text in any script, passes unchanged. A
// backslash is not doubled: the escapes are for a person to read, not to be
// decoded, and code (a diff of Go with "\n" in it) stays readable.
//
// A web page (the console) needs only part of this: a browser acts on no
// control character, but bidi and zero-width characters reorder and hide
// text there too (Visible).
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s safe to print on a terminal, keeping its newlines and
// tabs: for multi-line text (a diff, a prompt's text, a log item).
func Text(s string) string { return escape(s, inertText, true) }

// Line returns s safe to print on a terminal as part of one line: newline
// and tab are escaped too (a table's cell, a title).
func Line(s string) string { return escape(s, inertLine, true) }

// Visible returns s with the characters that reorder or hide text (format
// characters, the line and paragraph separators) shown as escapes, and
// everything else as it is: for text already escaped for HTML, whose
// control characters a browser ignores. Invalid UTF-8 passes too (the
// browser shows U+FFFD).
func Visible(s string) string { return escape(s, inertPage, false) }

// Which runes each context shows as escapes.
var (
	inertText = func(r rune) bool { return r != '\n' && r != '\t' && (unicode.Is(unicode.Cc, r) || reorders(r)) }
	inertLine = func(r rune) bool { return unicode.Is(unicode.Cc, r) || reorders(r) }
	inertPage = reorders
)

// reorders reports whether r reorders or hides text: a format character
// (bidi controls, zero-width ones, tags) or a line or paragraph separator.
func reorders(r rune) bool {
	return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}

// escape shows the runes unsafe names as escapes, and the bytes that are
// not UTF-8 too when invalid.
func escape(s string, unsafe func(rune) bool, invalid bool) string {
	i := firstUnsafe(s, unsafe, invalid)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if invalid {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteByte(s[i])
			}
		case !unsafe(r):
			b.WriteString(s[i : i+size])
		default:
			b.WriteString(visible(r))
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte to escape, -1 when none.
func firstUnsafe(s string, unsafe func(rune) bool, invalid bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if invalid {
				return i
			}
		} else if unsafe(r) {
			return i
		}
		i += size
	}
	return -1
}

// visible is the escape that shows r.
func visible(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	}
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}
