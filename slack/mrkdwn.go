package slack

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Agent text in Slack messages. What an agent controls — a request's
// title, command, file, URL and diff, a prompt's text, a session's title,
// CLI (the MCP client's name), agent, task and end reason, a tool's name, a
// policy rule planned from a command, a registry command's output, a name
// not linked to a Slack member — reaches a message, in its blocks and in
// its top-level text (what phones show in a notification), only through
// inert. Slack reads mrkdwn: <!channel>, <@U…>, <#C…>, <!subteam^…> and
// <http://x|label> are live, and a ``` in a command closes its code block;
// inert makes all of that plain text:
//
//   - & < > become &amp; &lt; &gt; (Slack shows them as typed; nothing
//     between < and > is ever read as a mention or a link);
//   - a backtick next to another backtick becomes ˋ (U+02CB, the modifier
//     letter grave accent, which reads as one): no run of two or more
//     backticks is left, so the text can neither close our code block nor
//     open one of its own; inside a code block the first and last
//     characters too, inside a code span every backtick;
//   - characters that reorder or hide text (bidi controls, zero-width ones,
//     every Unicode format character, the line and paragraph separators),
//     control characters and bytes that are not UTF-8 are shown as escapes
//     (\u202e, \x1b), as package termsafe shows them on a terminal;
//   - one-line text (a title, a name) shows its newlines and tabs as \n and
//     \t: it cannot start a line that reads as ours; quoted text keeps its
//     lines, each under the quote mark;
//   - it is clipped after all that, with the framing (the fence, the quote
//     marks) counted, to the budget the caller gives, within Slack's limits:
//     3,000 characters for a section's text, 40,000 for a message's text.
//     A clip never cuts an escape; "…" says that something was cut.
//
// An agent can still write emoji and *bold* in one-line and quoted text:
// that stays inside the frame of our message (after its label, inside the
// quote), never a mention, a link, a button or a line of its own.

// Slack's limits, counted in UTF-16 code units (Slack counts characters; a
// character outside the Basic Multilingual Plane may count as two, so a
// count of code units never goes past the limit).
const (
	maxSectionText = 3000
	maxMessageText = 40000
)

// shape is where agent text goes in a message.
type shape int

const (
	// oneLine is text within a line of ours (a title, a name, a reason).
	oneLine shape = iota
	// quoted is multi-line prose under a quote mark (a prompt's text).
	quoted
	// codeBlock is text in a ``` block (a command, a diff, an output).
	codeBlock
	// codeSpan is one-line text in a `code span` (a tool, a file, a URL).
	codeSpan
)

// graveLookalike is what a backtick that could make a fence becomes.
const graveLookalike = "ˋ"

// inert is agent text s made plain for Slack's mrkdwn in shape sh, framing
// included, at most limit UTF-16 code units.
func inert(s string, sh shape, limit int) string {
	var open, close, newline string
	switch sh {
	case quoted:
		open, newline = ">", "\n>"
	case codeBlock:
		open, close, newline = "```", "```", "\n"
	case codeSpan:
		open, close, newline = "`", "`", `\n`
	default:
		newline = `\n`
	}
	const ellipsis = "…"
	budget := limit - width(open) - width(close)
	var b strings.Builder
	b.WriteString(open)
	used := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var tok string
		switch {
		case r == utf8.RuneError && size == 1:
			tok = fmt.Sprintf(`\x%02x`, s[i])
		case r == '&':
			tok = "&amp;"
		case r == '<':
			tok = "&lt;"
		case r == '>':
			tok = "&gt;"
		case r == '\n':
			tok = newline
		case r == '\t' && (sh == oneLine || sh == codeSpan):
			tok = `\t`
		case r == '\t':
			tok = "\t"
		case r == '`' && fenceable(s, i, sh):
			tok = graveLookalike
		case hides(r):
			tok = visible(r)
		default:
			tok = s[i : i+size]
		}
		i += size
		// Room is kept for the ellipsis unless this is the last token.
		room := budget - used
		if i < len(s) {
			room -= width(ellipsis)
		}
		if width(tok) > room {
			b.WriteString(ellipsis)
			break
		}
		b.WriteString(tok)
		used += width(tok)
	}
	b.WriteString(close)
	return b.String()
}

// fenceable reports whether the backtick at s[i] must become the look-alike
// in shape sh: it has a backtick next to it, or (in a code block) it is
// the text's first or last character, or it is in a code span.
func fenceable(s string, i int, sh shape) bool {
	switch {
	case sh == codeSpan:
		return true
	case i > 0 && s[i-1] == '`', i+1 < len(s) && s[i+1] == '`':
		return true
	case sh == codeBlock && (i == 0 || i == len(s)-1):
		return true
	}
	return false
}

// hides reports whether r reorders or hides text or controls a display:
// a control character (newline and tab are the callers'), a format
// character (bidi embeddings, overrides, isolates and marks, the
// zero-width ones, tags), the line and paragraph separators.
func hides(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// visible is the escape that shows r.
func visible(r rune) string {
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// width is s's length as Slack's limits count it (UTF-16 code units).
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xffff {
			n++
		}
	}
	return n
}

// fitText keeps a text of ours (which holds inert pieces) within limit: a
// backstop, since each message's pieces have budgets that fit. It cuts at
// a character, never inside an entity or a code block, and says so.
func fitText(s string, limit int) string {
	if width(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut, n := 0, 0
	for i, r := range s {
		w := 1
		if r > 0xffff {
			w = 2
		}
		if n+w > limit-width(ellipsis) {
			break
		}
		n += w
		cut = i + utf8.RuneLen(r)
	}
	out := s[:cut]
	// An entity (&amp;) or an escape cut in half would show as garbage.
	if j := strings.LastIndexByte(out, '&'); j >= 0 && !strings.Contains(out[j:], ";") {
		out = out[:j]
	}
	// A code block cut open would make the rest of the text code: it goes.
	if strings.Count(out, "```")%2 == 1 {
		out = out[:strings.LastIndex(out, "```")]
	}
	return out + ellipsis
}
