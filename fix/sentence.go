package fix

import "strings"

// FirstSentence is what the cell keeps of a description that --fix=move
// moves into the task's README: its first line, cut after the first `.`,
// `!` or `?` that ends a sentence (followed by a space) outside inline code,
// so "Fix the export. It breaks on..." keeps "Fix the export." and
// "Bump `v0.14.2` deps" stays whole.
func FirstSentence(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	line = strings.TrimSpace(line)
	inCode := 0 // length of the backtick run that opened the code span
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '`':
			j := i
			for j < len(line) && line[j] == '`' {
				j++
			}
			switch {
			case inCode == 0 && strings.Contains(line[j:], line[i:j]):
				inCode = j - i
			case inCode == j-i:
				inCode = 0
			}
			i = j - 1
		case inCode == 0 && (c == '.' || c == '!' || c == '?') && i+1 < len(line) && line[i+1] == ' ':
			return line[:i+1]
		}
	}
	return line
}
