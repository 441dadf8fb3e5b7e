package task

import (
	"strings"
)

// AppendStatusLine adds line at the end of the README's status or log
// section: the first Markdown heading whose text contains "status", "log" or
// "history" (outside code fences). ok is false when there is no such section.
func AppendStatusLine(readme []byte, line string) (out []byte, ok bool) {
	return appendToSection(readme, func(text string) bool {
		lt := strings.ToLower(text)
		return strings.Contains(lt, "status") || strings.Contains(lt, "log") || strings.Contains(lt, "history")
	}, []string{line})
}

// appendToSection adds lines at the end of the section whose heading text
// matches (outside code fences): the first match wins, a level-1 title only
// when nothing deeper matches. ok is false when no heading matches.
func appendToSection(readme []byte, match func(text string) bool, add []string) (out []byte, ok bool) {
	lines := strings.SplitAfter(string(readme), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type heading struct{ idx, level int }
	var heads []heading
	start, level := -1, 0
	fence := ""
	for i, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		trim := strings.TrimLeft(t, " ")
		if len(t)-len(trim) <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
			switch {
			case fence == "":
				fence = trim[:3]
			case strings.HasPrefix(trim, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		lv, text := atxHeading(t)
		if lv == 0 {
			continue
		}
		heads = append(heads, heading{i, lv})
		if match(text) {
			if start < 0 || (level == 1 && lv > 1) {
				start, level = i, lv
			}
		}
	}
	if start < 0 {
		return readme, false
	}
	end := len(lines)
	for _, h := range heads {
		if h.idx > start && h.level <= level {
			end = h.idx
			break
		}
	}
	last := start
	for i := end - 1; i > start; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = i
			break
		}
	}
	eol := "\n"
	if strings.HasSuffix(lines[start], "\r\n") {
		eol = "\r\n"
	}
	var b strings.Builder
	for i := 0; i <= last; i++ {
		b.WriteString(lines[i])
	}
	if !strings.HasSuffix(lines[last], "\n") {
		b.WriteString(eol)
	}
	if last == start {
		b.WriteString(eol)
	}
	for _, l := range add {
		b.WriteString(strings.ReplaceAll(l, "\n", eol) + eol)
	}
	for i := last + 1; i < len(lines); i++ {
		b.WriteString(lines[i])
	}
	return []byte(b.String()), true
}

// atxHeading returns the level and text of a "# text" line, or 0.
func atxHeading(l string) (int, string) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0, ""
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	return n, strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#"))
}
