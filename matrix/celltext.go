package matrix

import (
	"strings"
	"unicode"
)

// Text in a cell. A table row is one line, so text that goes on over
// several lines is written the way GitHub shows it as text with line breaks:
// the lines joined with `<br>`, a run of blank lines as `<br><br>` (a
// paragraph break), every `|` escaped. Nothing else changes: a list item
// keeps its `1.` or `- [ ]`, a heading its `##`, so the text reads as it was
// written.
//
// A fenced code block cannot stay a fence in a cell: GFM reads ```bash ...
// ``` on one line as one code span, with every `<br>` shown as text. So each
// line of the block, fence lines included, becomes an inline code span of its
// own (`` ` ```bash ` ``, `` `cat a.log \| wc -l` ``): GitHub shows the
// block line by line in monospace, the fence lines say where it starts and
// ends and in which language, and every character of the block is kept.
// Blank lines inside the block stay empty lines.
//
// JoinCell writes a cell's raw text so (`validate --fix`), EncodeText a value
// given to a command (`task create -d`, MCP), and DecodeText is what every
// reader shows of such a cell: the lines back, code lines without their
// backticks. A repaired row reads as it did before the repair, except for
// what a table cell cannot hold: the indentation of text lines and trailing
// white space.

// JoinCell returns text, the raw text of a cell that holds line breaks (LF
// or CRLF), as one line for a table row. Pipes escaped as `\|` stay as they
// are; bare ones get their `\`.
func JoinCell(text string) string { return joinLines(text, false) }

// EncodeText returns v, a value given to a command, as the text of one cell:
// its line breaks written as JoinCell writes them, every `|` escaped, and a
// `<br>` typed as text written `&lt;br>`, so that DecodeText gives v back.
// Leading and trailing white space goes.
func EncodeText(v string) string {
	if strings.IndexByte(v, '\r') >= 0 {
		v = strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\r", "\n") // a lone CR ends a Markdown line too
	}
	return joinLines(v, true)
}

func joinLines(text string, value bool) string {
	var (
		b       strings.Builder
		f       fence
		pending string // the separator before the next piece
		started bool
	)
	escape := EscapePipes
	if value {
		escape = escapeEveryPipe
	}
	add := func(piece string) {
		if started {
			if strings.HasSuffix(b.String(), `\`) {
				b.WriteByte(' ') // `\<br>` would escape the `<` and show the tag as text
			}
			b.WriteString(pending)
		}
		b.WriteString(piece)
		started, pending = true, "<br>"
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if f.feed([]byte(line)) {
			if line == "" {
				if started {
					pending += "<br>" // an empty line of code
				}
				continue
			}
			add(codeSpan(line, escape))
			continue
		}
		if strings.TrimSpace(line) == "" {
			if started {
				pending = "<br><br>"
			}
			continue
		}
		line = strings.TrimLeftFunc(line, unicode.IsSpace) // indentation shows nothing after <br>
		if value {
			line = mapOutsideCode(line, escapeBreakTags)
		}
		add(escape(escapeOpenBackticks(line)))
	}
	return b.String()
}

// EscapePipes writes every `|` of s that no `\` precedes as `\|`, the way a
// table cell holds a pipe (also inside a code span, in GFM).
func EscapePipes(s string) string {
	if !strings.Contains(s, "|") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && (i == 0 || s[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeEveryPipe writes every `|` of a value as `\|`: in a value, a `\`
// before a `|` is a character of its own.
func escapeEveryPipe(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// codeSpan returns line as an inline code span: delimited by the shortest
// run of backticks that the line does not hold, padded with a space where
// the line starts or ends with a backtick (or with a space at both ends,
// which a code span would otherwise strip), and with its pipes escaped.
func codeSpan(line string, escape func(string) string) string {
	runs := map[int]bool{}
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		runs[j-i] = true
		i = j
	}
	n := 1
	for runs[n] {
		n++
	}
	delim := strings.Repeat("`", n)
	pad := ""
	if line[0] == '`' || line[len(line)-1] == '`' || line[0] == ' ' && line[len(line)-1] == ' ' {
		pad = " "
	}
	return delim + pad + escape(line) + pad + delim
}

// DecodeText returns what a reader shows of a cell's value (its `\|`
// already read as `|`): each `<br>` (`<br/>`, `<br />`, any case) outside
// inline code a line break, the lines of a code block that JoinCell wrote
// as inline code back as the block's lines, `&lt;br>` as `<br>` and `\“ as
// a backtick. Text with none of these is returned as it is.
func DecodeText(v string) string {
	if !strings.ContainsAny(v, "<&`") {
		return v
	}
	pieces := splitBreaks(v)
	if len(pieces) == 1 {
		// One code span that opens a fence is a line of a code block as
		// JoinCell writes it, on one line: a cell read whole over several
		// lines (not fixed yet) keeps its backticks and its lines.
		if c, ok := soleCodeSpan(strings.TrimSpace(v)); ok && !strings.Contains(v, "\n") && opensFence(c) {
			return c
		}
		if !strings.Contains(v, "&") && !strings.Contains(v, "\\`") {
			return v // no <br>: as read (a cell over several lines keeps its lines)
		}
	}
	type piece struct {
		text string
		code bool // a line of a code block written as it is (not as inline code)
	}
	var ps []piece
	if strings.Contains(v, "\n") {
		// A cell read whole over several lines (not fixed yet) that also
		// holds <br>: its line ends break too ("a\n<br>b" has a blank line
		// between, as the fix writes it), and the lines of a code block in
		// it stay as they are.
		var rf fence
		for _, line := range strings.Split(v, "\n") {
			if rf.feed([]byte(line)) {
				ps = append(ps, piece{strings.TrimRight(line, " \t\r"), true})
				continue
			}
			for _, p := range splitBreaks(line) {
				ps = append(ps, piece{text: p})
			}
		}
	} else {
		for _, p := range pieces {
			ps = append(ps, piece{text: p})
		}
	}
	out := make([]string, 0, len(ps))
	var f fence
	blankText := false // the last line out is a blank line of text
	for _, pc := range ps {
		if pc.code {
			out, blankText = append(out, pc.text), false
			continue
		}
		p := strings.TrimSpace(pc.text)
		if c, ok := soleCodeSpan(p); ok && (f.char != 0 || opensFence(c)) {
			f.feed([]byte(c))
			out, blankText = append(out, c), false
			continue
		}
		if f.char != 0 && p == "" {
			out, blankText = append(out, ""), false // an empty line of code
			continue
		}
		f = fence{} // text: a block that was open ended without its fence line
		if p == "" && blankText {
			continue // a run of blank lines is one paragraph break, as the fix writes it
		}
		out, blankText = append(out, mapOutsideCode(p, unescapeText)), p == ""
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:] // a cell that starts with <br>
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// opensFence reports whether line opens a fenced code block.
func opensFence(line string) bool {
	var f fence
	f.feed([]byte(line))
	return f.char != 0
}

// soleCodeSpan returns the content of s when s is one inline code span and
// nothing else, as CommonMark reads it: one space stripped from each end
// when both ends hold one (and it is not all spaces).
func soleCodeSpan(s string) (string, bool) {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if n == 0 || len(s) < 2*n+1 || closingRun(s, n) != len(s)-n {
		return "", false
	}
	c := s[n : len(s)-n]
	if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
		c = c[1 : len(c)-1]
	}
	return c, true
}

// closingRun returns the start of the first run of exactly n backticks in s
// after its opening run of n, or -1.
func closingRun(s string, n int) int {
	for i := n; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// splitBreaks splits s at the `<br>` tags outside inline code.
func splitBreaks(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2 // an escaped character opens no code span
		case '`':
			i = pastCodeSpan(s, i)
		case '<':
			if n := breakTagLen(s[i:]); n > 0 {
				out = append(out, s[start:i])
				i += n
				start = i
				continue
			}
			i++
		default:
			i++
		}
	}
	return append(out, s[start:])
}

// pastCodeSpan returns where the code span opened by the backtick run at i
// ends, or the end of the run when no run as long closes it (the backticks
// are then text).
func pastCodeSpan(s string, i int) int {
	n := runLen(s, i)
	if k := closingRun(s[i:], n); k >= 0 {
		return i + k + n
	}
	return i + n
}

// breakTagLen returns the length of the `<br>`, `<br/>` or `<br />` (any
// case) that s starts with, or 0.
func breakTagLen(s string) int {
	if len(s) < 4 || s[0] != '<' || s[1]|0x20 != 'b' || s[2]|0x20 != 'r' {
		return 0
	}
	switch {
	case s[3] == '>':
		return 4
	case strings.HasPrefix(s[3:], "/>"):
		return 5
	case strings.HasPrefix(s[3:], " />"):
		return 6
	}
	return 0
}

// mapOutsideCode applies fn to the parts of s outside inline code spans.
func mapOutsideCode(s string, fn func(string) string) string {
	if !strings.Contains(s, "`") {
		return fn(s)
	}
	var b strings.Builder
	text := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
		case '`':
			n := runLen(s, i)
			k := closingRun(s[i:], n)
			if k < 0 {
				i += n // no run as long closes it: the backticks are text
				continue
			}
			end := i + k + n
			b.WriteString(fn(s[text:i]))
			b.WriteString(s[i:end])
			text, i = end, end
		default:
			i++
		}
	}
	if text < len(s) {
		b.WriteString(fn(s[text:]))
	}
	return b.String()
}

func runLen(s string, i int) int {
	j := i
	for j < len(s) && s[j] == '`' {
		j++
	}
	return j - i
}

// escapeOpenBackticks writes each backtick of a run that no run as long
// closes on the line as `\“: joined with the next lines, it would open an
// inline code span across the `<br>`, which would then show as text.
func escapeOpenBackticks(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		switch line[i] {
		case '\\':
			end := min(i+2, len(line))
			b.WriteString(line[i:end])
			i = end
		case '`':
			n := runLen(line, i)
			if k := closingRun(line[i:], n); k >= 0 {
				b.WriteString(line[i : i+k+n])
				i += k + n
				continue
			}
			b.WriteString(strings.Repeat("\\`", n))
			i += n
		default:
			b.WriteByte(line[i])
			i++
		}
	}
	return b.String()
}

// unescapeText reads text outside inline code as GitHub shows it: `&lt;br>`
// as `<br>`, and `\“ as a backtick.
func unescapeText(s string) string {
	if !strings.Contains(s, "&") && !strings.Contains(s, "\\`") {
		return s
	}
	s = unescapeBreakTags(s)
	if !strings.Contains(s, "\\`") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] != '`' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeBreakTags writes each `<br>` tag of text as `&lt;br>`: typed text,
// not a line break.
func escapeBreakTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && breakTagLen(s[i:]) > 0 {
			b.WriteString("&lt;")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeBreakTags reads `&lt;br>` (any case, `/>` and ` />` too) as the
// text `<br>`, as GitHub shows it.
func unescapeBreakTags(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '&' && len(s)-i > 4 && strings.EqualFold(s[i:i+4], "&lt;") && breakTagLen("<"+s[i+4:]) > 0 {
			b.WriteByte('<')
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
