package fix

import (
	"strings"
	"unicode"
)

// A cell that goes on over several lines is written on one line so that
// GitHub still renders it as text with line breaks: the lines are joined with
// `<br>`, a run of blank lines with `<br><br>` (a paragraph break), and
// every `|` that is not escaped gets its `\`. Nothing else changes: a list
// item keeps its `1.` or `- [ ]`, a heading its `##`, so the text reads as it
// was written.
//
// A fenced code block cannot stay a fence in a cell: GFM reads ```bash ...
// ``` on one line as one code span, with every `<br>` shown as text. So each
// line of the block, fence lines included, becomes an inline code span of its
// own (`` ` ```bash ` ``, `` `cat a.log \| wc -l` ``): GitHub shows the
// block line by line in monospace, the fence lines say where it starts and
// ends and in which language, and every character of the block is kept.
// Blank lines inside the block stay empty lines.

// JoinCell returns text, the raw text of a cell that holds line breaks (LF
// or CRLF), as one line for a table row.
func JoinCell(text string) string {
	var (
		b       strings.Builder
		f       fence
		pending string // the separator before the next piece
		started bool
	)
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
		if f.feed(line) {
			if line == "" {
				if started {
					pending += "<br>" // an empty line of code
				}
				continue
			}
			add(codeSpan(line))
			continue
		}
		if strings.TrimSpace(line) == "" {
			if started {
				pending = "<br><br>"
			}
			continue
		}
		add(EscapePipes(strings.TrimLeftFunc(line, unicode.IsSpace))) // indentation shows nothing after <br>
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

// codeSpan returns line as an inline code span: delimited by the shortest
// run of backticks that the line does not hold, padded with a space where
// the line starts or ends with a backtick (or with a space at both ends,
// which a code span would otherwise strip), and with its pipes escaped.
func codeSpan(line string) string {
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
	return delim + pad + EscapePipes(line) + pad + delim
}

// fence tracks a fenced code block inside a cell, as CommonMark opens and
// closes one: a run of three or more backticks or tildes (a backtick fence's
// info string holds no backtick), closed by a run of the same character at
// least as long with nothing after it.
type fence struct {
	char byte
	n    int
}

// feed reports whether line opens or closes a fence or lies inside one.
func (f *fence) feed(line string) bool {
	t := strings.TrimLeft(line, " \t")
	run := 0
	for run < len(t) && (t[run] == '`' || t[run] == '~') && t[run] == t[0] {
		run++
	}
	if f.char != 0 {
		if run >= f.n && t[0] == f.char && strings.TrimSpace(t[run:]) == "" {
			f.char = 0
		}
		return true
	}
	if run >= 3 && !(t[0] == '`' && strings.Contains(t[run:], "`")) {
		f.char, f.n = t[0], run
		return true
	}
	return false
}
