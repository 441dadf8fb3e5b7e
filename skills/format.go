package skills

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// Formats a skill can be rendered in.
const (
	// FormatFull is the front-matter fields, the whole body and the resource files.
	FormatFull = "full"
	// FormatSummary is the name, description and outline of headings, at most SummaryLimit characters.
	FormatSummary = "summary"
	// FormatInstructionsOnly is the body without sections headed Example(s), Reference(s) or Resources.
	FormatInstructionsOnly = "instructions_only"
)

// Formats lists the valid formats.
var Formats = []string{FormatFull, FormatSummary, FormatInstructionsOnly}

// SummaryLimit bounds a summary, in characters (runes).
const SummaryLimit = 1500

// descriptionLimit bounds the description inside a summary, in runes.
const descriptionLimit = 600

// ValidFormat returns the canonical format name ("" means summary) or an error listing valid ones.
func ValidFormat(f string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(f)) {
	case "":
		return FormatSummary, nil
	case FormatFull:
		return FormatFull, nil
	case FormatSummary:
		return FormatSummary, nil
	case FormatInstructionsOnly, "instructions-only", "instructions":
		return FormatInstructionsOnly, nil
	}
	return "", fmt.Errorf("unknown skill format %q; use one of %s", f, strings.Join(Formats, ", "))
}

// Render renders s in format f (see the Format* constants). The output ends with one newline.
func Render(s Skill, f string) (string, error) {
	f, err := ValidFormat(f)
	if err != nil {
		return "", err
	}
	switch f {
	case FormatFull:
		return renderFull(s), nil
	case FormatInstructionsOnly:
		return renderInstructions(s), nil
	}
	return renderSummary(s), nil
}

func title(s Skill) string {
	if s.Name == s.Slug || s.Name == "" {
		return "## Skill: " + s.Slug
	}
	return "## Skill: " + mdtext.OneLine(s.Name) + " (" + s.Slug + ")"
}

func renderFull(s Skill) string {
	var b strings.Builder
	b.WriteString(title(s))
	b.WriteString("\n\n")
	if s.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", mdtext.OneLine(s.Description))
	}
	keys := make([]string, 0, len(s.Meta))
	for k := range s.Meta {
		if k != "name" && k != "description" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", mdtext.OneLine(k), metaValue(s.Meta[k]))
	}
	fmt.Fprintf(&b, "source: %s/SKILL.md\n", s.DisplayDir)
	if body := trimBlankLines(s.Body); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
	}
	if len(s.Resources) > 0 {
		fmt.Fprintf(&b, "\nResource files in %s/:\n", s.DisplayDir)
		for _, r := range s.Resources {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	return b.String()
}

// metaValue shows a front-matter value on one line: scalars as written, lists and maps as JSON.
func metaValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return mdtext.OneLine(v)
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return mdtext.OneLine(fmt.Sprint(v))
	}
	return string(j)
}

func renderInstructions(s Skill) string {
	var b strings.Builder
	b.WriteString(title(s))
	b.WriteString("\n\n")
	if s.Description != "" {
		b.WriteString(mdtext.OneLine(s.Description))
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "source: %s/SKILL.md\n", s.DisplayDir)
	if body := trimBlankLines(InstructionsOnly(s.Body)); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
	}
	return b.String()
}

func renderSummary(s Skill) string {
	head := title(s) + "\n\n"
	if s.Description != "" {
		head += truncateRunes(mdtext.OneLine(s.Description), descriptionLimit) + "\n\n"
	}
	tail := fmt.Sprintf("Load the full text with `agentinfra skill load %s --format full` or read %s/SKILL.md", s.Slug, s.DisplayDir)
	if n := len(s.Resources); n == 1 {
		tail += " (1 resource file beside it)"
	} else if n > 1 {
		tail += fmt.Sprintf(" (%d resource files beside it)", n)
	}
	tail += ".\n"
	headings := Outline(s.Body)
	var outline strings.Builder
	if len(headings) > 0 {
		minLevel := 6
		for _, h := range headings {
			minLevel = min(minLevel, h.Level)
		}
		lines := make([]string, len(headings))
		for i, h := range headings {
			lines[i] = strings.Repeat("  ", h.Level-minLevel) + "- " + h.Text + "\n"
		}
		budget := SummaryLimit - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail) - utf8.RuneCountInString("Outline:\n\n")
		used := 0
		kept := 0
		for i, l := range lines {
			n := utf8.RuneCountInString(l)
			rest := len(lines) - i - 1
			reserve := 0
			if rest > 0 {
				reserve = utf8.RuneCountInString(moreLine(rest + 1))
			}
			if used+n+reserve > budget {
				break
			}
			used += n
			kept++
		}
		if kept > 0 || budget >= utf8.RuneCountInString(moreLine(len(lines))) {
			outline.WriteString("Outline:\n")
			for _, l := range lines[:kept] {
				outline.WriteString(l)
			}
			if kept < len(lines) {
				outline.WriteString(moreLine(len(lines) - kept))
			}
			outline.WriteString("\n")
		}
	}
	out := head + outline.String() + tail
	if utf8.RuneCountInString(out) > SummaryLimit {
		out = truncateRunes(out, SummaryLimit-1) + "\n"
	}
	return out
}

func moreLine(n int) string { return fmt.Sprintf("- … and %d more headings\n", n) }

// truncateRunes cuts s to at most n runes, at a word boundary when one is
// near, ending in "…".
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)*3/4 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ") + "…"
}

func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	start, end := 0, len(lines)
	for start < end && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	for i := start; i < end; i++ {
		lines[i] = strings.TrimRight(lines[i], " \t")
	}
	return strings.Join(lines[start:end], "\n")
}

// Heading is one ATX heading of a Markdown body.
type Heading struct {
	Level int    // 1-6
	Text  string // without the #s
	Line  int    // 0-based line index in the body
}

// Outline returns the ATX headings (# ... ######) of body, ignoring lines
// inside fenced code blocks.
func Outline(body string) []Heading {
	var out []Heading
	var fence fenceState
	for i, line := range strings.Split(body, "\n") {
		if fence.step(line) {
			continue
		}
		if lvl, text, ok := atxHeading(line); ok {
			out = append(out, Heading{Level: lvl, Text: text, Line: i})
		}
	}
	return out
}

// fenceState tracks ``` and ~~~ fenced code blocks line by line.
type fenceState struct {
	char byte
	n    int
}

// step consumes line and reports whether it is inside (or delimits) a fenced block.
func (f *fenceState) step(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return f.n > 0
	}
	if f.n > 0 {
		c, n := fenceRun(t)
		if c == f.char && n >= f.n && strings.TrimSpace(t[n:]) == "" {
			f.n = 0
		}
		return true
	}
	if c, n := fenceRun(t); n >= 3 {
		if c == '`' && strings.ContainsRune(t[n:], '`') {
			return false // not a fence: backticks in the info string
		}
		f.char, f.n = c, n
		return true
	}
	return false
}

func fenceRun(t string) (byte, int) {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return 0, 0
	}
	c := t[0]
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	return c, n
}

func atxHeading(line string) (int, string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, "#") {
		return 0, "", false
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(t[n:])
	// Optional closing sequence of #s preceded by a space.
	if s := strings.TrimRight(text, "#"); s != text && (s == "" || strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t")) {
		text = strings.TrimSpace(s)
	}
	return n, text, true
}

// strippedSections are the heading words whose sections instructions_only drops.
var strippedSections = []string{"example", "examples", "reference", "references", "resources"}

// isStrippedHeading reports whether a heading names an examples/references
// section: the word alone (any case, optional trailing colon), or followed by
// ":", " -", " —" or " (" and more text, e.g. "Examples: table tests".
func isStrippedHeading(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	for _, w := range strippedSections {
		if t == w || t == w+":" {
			return true
		}
		if rest, ok := strings.CutPrefix(t, w); ok {
			for _, sep := range []string{":", " -", " —", " –", " ("} {
				if strings.HasPrefix(rest, sep) {
					return true
				}
			}
		}
	}
	return false
}

// InstructionsOnly removes from body every section whose heading is Example,
// Examples, Reference, References or Resources (see isStrippedHeading), at any
// level, up to the next heading of the same or a higher level.
func InstructionsOnly(body string) string {
	lines := strings.Split(body, "\n")
	keep := make([]bool, len(lines))
	var fence fenceState
	skipLevel := 0 // > 0 while inside a dropped section of that level
	for i, line := range lines {
		inFence := fence.step(line)
		if !inFence {
			if lvl, text, ok := atxHeading(line); ok {
				if skipLevel > 0 && lvl <= skipLevel {
					skipLevel = 0
				}
				if skipLevel == 0 && isStrippedHeading(text) {
					skipLevel = lvl
				}
			}
		}
		keep[i] = skipLevel == 0
	}
	var b strings.Builder
	for i, line := range lines {
		if keep[i] {
			b.WriteString(line)
			if i < len(lines)-1 {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
