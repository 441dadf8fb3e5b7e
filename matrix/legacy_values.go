package matrix

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// How the older format's cells become task values. docs/matrix-format.md
// ("Converting the older Item format") states these rules for users.

// Done and to-do markers, longest first so that "✔️" is not read as "✔".
var (
	doneMarkers = []string{"✔️", "☑️", "✅", "✔", "☑", "✓", "[x]", "[X]"}
	todoMarkers = []string{"⬜", "☐", "🔲", "[ ]"}
)

// markerState is what the markers of an item say.
type markerState int

const (
	noMarker markerState = iota
	markedTodo
	markedInProgress // only through a legend (🚧 = in progress)
	markedDone
)

func (m markerState) merge(o markerState) markerState { return max(m, o) }

// markerCell reads a cell made only of markers ("✅", "[ ]", "DONE", "x"):
// ok is false when the cell holds anything else, which is then information
// to keep. An empty cell is a marker cell that says nothing.
func markerCell(s string) (state markerState, ok bool) {
	s = strings.TrimSpace(s)
	for s != "" {
		m, rest := cutMarker(s, true)
		if m == noMarker {
			return state, false
		}
		state = state.merge(m)
		s = strings.TrimSpace(rest)
	}
	return state, true
}

// cutMarker removes one marker from the start of s. words also accepts
// done, todo and x in any case (a whole cell); otherwise only DONE and TODO
// in capitals, followed by a space or a colon, count: "Done button" is a title.
func cutMarker(s string, words bool) (markerState, string) {
	for _, set := range []struct {
		state   markerState
		markers []string
	}{{markedDone, doneMarkers}, {markedTodo, todoMarkers}} {
		for _, m := range set.markers {
			if strings.HasPrefix(s, m) {
				return set.state, s[len(m):]
			}
		}
	}
	word := s
	if i := strings.IndexAny(s, " \t:"); i >= 0 {
		word = s[:i]
	}
	rest := strings.TrimLeft(s[len(word):], " \t")
	for _, sep := range []string{":", "—", "–", "- "} { // "DONE: x", "DONE — x"
		if strings.HasPrefix(rest, sep) {
			rest = rest[len(sep):]
			break
		}
	}
	if !words && len(word) < len(s) && s[len(word)] != ':' && s[len(word)] != ' ' {
		return noMarker, s
	}
	switch {
	case word == "DONE", words && (strings.EqualFold(word, "done") || strings.EqualFold(word, "x")):
		return markedDone, rest
	case word == "TODO", words && strings.EqualFold(word, "todo"):
		return markedTodo, rest
	}
	return noMarker, s
}

// cutTrailingMarker removes one symbol marker (✅, [x], ...) from the end of s.
func cutTrailingMarker(s string) (markerState, string) {
	for _, set := range []struct {
		state   markerState
		markers []string
	}{{markedDone, doneMarkers}, {markedTodo, todoMarkers}} {
		for _, m := range set.markers {
			if strings.HasSuffix(s, m) {
				return set.state, s[:len(s)-len(m)]
			}
		}
	}
	return noMarker, s
}

// itemTitle strips the done and to-do markers from an Item cell — leading
// and trailing ones, and ~~strike-through~~ around the whole title — and
// says what they meant. Every other character is kept.
func itemTitle(raw string) (string, markerState) {
	s, state := strings.TrimSpace(raw), noMarker
	for {
		before := s
		if m, rest := cutMarker(s, false); m != noMarker {
			s, state = strings.TrimSpace(rest), state.merge(m)
		}
		if m, rest := cutTrailingMarker(s); m != noMarker {
			s, state = strings.TrimSpace(rest), state.merge(m)
		}
		if len(s) > 4 && strings.HasPrefix(s, "~~") && strings.HasSuffix(s, "~~") && !strings.Contains(s[2:len(s)-2], "~~") {
			s, state = strings.TrimSpace(s[2:len(s)-2]), markedDone
		}
		if s == before {
			return s, state
		}
	}
}

// Difficulty words and size codes, as whole lower-case words.
var (
	easyWords = []string{"trivial", "easy", "simple", "small", "quick", "tiny", "minor", "xs", "s"}
	medWords  = []string{"medium", "med", "moderate", "average", "normal", "m"}
	hardWords = []string{"hard", "difficult", "complex", "large", "big", "huge", "major", "epic", "l", "xl", "xxl"}
)

// The regexps of legacy values are compiled on first use: only migrate
// needs them, and compiling them cost every command about 2M instructions at
// start-up.
var wordRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}+-]+`) })

// firstWordMatch returns the class of the first word of text found in one
// of the lists (in text order), or "".
func firstWordMatch(text string, classes []string, lists ...[]string) string {
	for _, w := range wordRe().FindAllString(strings.ToLower(text), -1) {
		w = strings.Trim(w, "+-")
		for i, l := range lists {
			for _, x := range l {
				if w == x {
					return classes[i]
				}
			}
		}
	}
	return ""
}

// legacyDifficulty maps a Difficulty (Size) cell to easy, med or hard: easy,
// med, medium or hard; else the file's legend row for it, by the words of its
// meaning (trivial, medium, complex, ...) or else by the time it names (under
// 4 hours easy, under a day med, a day or more hard); else the size codes
// XS/S easy, M med, L/XL hard, and the same words (after any alias the
// difficulty vocabulary accepts). ok is false when nothing
// applies.
func legacyDifficulty(raw string, legend map[string]string) (diff string, ok bool) {
	v := cleanValue(raw)
	if emptyValue(v) {
		return "", true
	}
	switch strings.ToLower(v) {
	case "easy", "med", "hard":
		return strings.ToLower(v), true
	case "medium":
		return "med", true
	}
	// The file's own legend comes before any alias: it says what its codes mean.
	if meaning, found := legend[strings.ToLower(v)]; found {
		if d := difficultyWords(meaning, false); d != "" {
			return d, true
		}
		if h, found := hoursIn(meaning); found {
			switch {
			case h < 4:
				return "easy", true
			case h < 8:
				return "med", true
			}
			return "hard", true
		}
	}
	if d, err := NormalizeDifficulty(v); err == nil {
		return d, true
	}
	if d := difficultyWords(v, true); d != "" {
		return d, true
	}
	return "", false
}

func difficultyWords(text string, codes bool) string {
	e, m, h := easyWords, medWords, hardWords
	if !codes { // in a legend's prose, "s" and "m" are no size codes
		e, m, h = e[:len(e)-2], m[:len(m)-1], h[:len(h)-3]
	}
	return firstWordMatch(text, []string{"easy", "med", "hard"}, e, m, h)
}

var (
	amountRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|few|couple(?: of)?)(?:\s*(?:-|–|to|or)\s*(\d+(?:\.\d+)?|two|three|four|five|six))?\s*(minutes?|mins?|hours?|hrs?|h|days?|d|weeks?|wks?|w|months?)\b`)
	})
	halfDayRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bhalf(?:\s+a|-a)?[\s-]+day\b`) })
	numWords  = map[string]float64{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple": 2, "couple of": 2}
)

// hoursIn finds the first time a text names ("under an hour", "half a day",
// "1-2 days", "a week+") in working hours (a day is 8, a week 40); a range
// counts as its upper end.
func hoursIn(text string) (float64, bool) {
	if loc := halfDayRe().FindStringIndex(text); loc != nil {
		if m := amountRe().FindStringIndex(text); m == nil || loc[0] <= m[0] {
			return 4, true
		}
	}
	m := amountRe().FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	amount := func(s string) float64 {
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			return n
		}
		return numWords[strings.ToLower(s)]
	}
	n := amount(m[1])
	if m[2] != "" {
		n = max(n, amount(m[2]))
	}
	unit := strings.ToLower(m[3])
	switch {
	case strings.HasPrefix(unit, "min"):
		return n / 60, true
	case strings.HasPrefix(unit, "h"):
		return n, true
	case strings.HasPrefix(unit, "d"):
		return n * 8, true
	case strings.HasPrefix(unit, "w"):
		return n * 40, true
	}
	return n * 160, true // months
}

var priTokenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bP([0-4])\b`) })

// legacyPriority maps a Priority cell, else the section heading above the
// table, to P1–P4: P1–P4 (P0 reads as P1, a bare 1–4 as P1–P4); else the
// file's priority legend row for the value, read the same way; else the
// words critical/urgent/blocker (P1), high (P2), medium/normal (P3) and
// low/minor/nice-to-have (P4). ok is false when a non-empty cell fits none;
// a heading that fits none leaves the priority empty.
func legacyPriority(raw, section string, legend map[string]string) (pri string, ok bool) {
	v := cleanValue(raw)
	if emptyValue(v) {
		return priorityIn(section, legend), true
	}
	if p := priorityIn(v, legend); p != "" {
		return p, true
	}
	return "", false
}

func priorityIn(text string, legend map[string]string) string {
	if p, err := NormalizePriority(cleanValue(text)); err == nil {
		return p
	}
	if m := priTokenRe().FindStringSubmatch(text); m != nil {
		return "P" + strings.Replace(m[1], "0", "1", 1)
	}
	if meaning, found := legend[strings.ToLower(cleanValue(text))]; found {
		if p := priorityIn(meaning, nil); p != "" {
			return p
		}
	}
	return firstWordMatch(text, []string{"P1", "P2", "P3", "P4"},
		[]string{"critical", "urgent", "blocker", "blocking", "highest", "asap"},
		[]string{"high", "important"},
		[]string{"medium", "normal", "moderate", "med"},
		[]string{"low", "lowest", "minor", "nice-to-have", "someday", "later", "optional"})
}
