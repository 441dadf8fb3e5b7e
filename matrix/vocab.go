package matrix

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Vocabulary is the set of values a matrix allows in Status, Pri and Diff,
// with the other words people write for them (aliases). Values match
// case-insensitively, and a space or '-' matches '_' ("in progress" is
// IN_PROGRESS). A Vocabulary is immutable: build one with NewVocabulary or
// DefaultVocabulary, or read a workspace's with task.LoadVocabulary.
type Vocabulary struct {
	values       map[string][]string          // column → canonical values, in order
	lookup       map[string]map[string]string // column → key (see vocabKey) → canonical value
	canonicalize bool
	source       string
	statusesLine int
	// values' lists, for the hot paths (no map lookup per cell).
	statuses, priorities, difficulties []string
}

// VocabularySpec describes a Vocabulary. Empty lists keep the default list of
// that column; Aliases maps a column (ColStatus, ColPri or ColDiff; the
// config file's words status, priority, difficulty work too) to alias → value.
type VocabularySpec struct {
	Statuses, Priorities, Difficulties []string
	Aliases                            map[string]map[string]string
	// Canonicalize asks `validate --fix` to rewrite aliases to their value.
	Canonicalize bool
	// Source names where the spec came from, for messages ("" = defaults).
	Source string
	// StatusesLine is the line of the statuses list in Source (0: none).
	StatusesLine int
}

// DefaultAliases are the words accepted for the default values. A workspace
// config adds to them; an alias whose value the config does not allow is
// dropped. Priority follows the common Urgent/High/Medium/Low scale, and P0
// (the "drop everything" level of some trackers) is our highest, P1.
var DefaultAliases = map[string]map[string]string{
	ColStatus: {
		"to do": "TODO", "open": "TODO", "new": "TODO", "backlog": "TODO",
		"wip": "IN_PROGRESS", "doing": "IN_PROGRESS", "started": "IN_PROGRESS", "active": "IN_PROGRESS",
		"in review": "REVIEW", "reviewing": "REVIEW", "needs review": "REVIEW",
		"done": "DONE", "complete": "DONE", "completed": "DONE", "finished": "DONE", "closed": "DONE",
		"on hold": "BLOCKED", "waiting": "BLOCKED",
	},
	ColPri: {
		"1": "P1", "2": "P2", "3": "P3", "4": "P4", "p0": "P1", "0": "P1",
		"critical": "P1", "urgent": "P1", "high": "P2", "medium": "P3", "normal": "P3", "low": "P4",
	},
	ColDiff: {
		"medium": "med", "m": "med", "moderate": "med", "normal": "med",
		"trivial": "easy", "small": "easy", "s": "easy", "xs": "easy", "low": "easy", "simple": "easy",
		"large": "hard", "l": "hard", "xl": "hard", "high": "hard", "complex": "hard", "difficult": "hard",
	},
}

var defaultVocabulary = mustVocabulary(VocabularySpec{})

func mustVocabulary(s VocabularySpec) *Vocabulary {
	v, err := NewVocabulary(s)
	if err != nil {
		panic(err)
	}
	return v
}

// DefaultVocabulary is the vocabulary of a workspace without a matrix config:
// Statuses, Priorities and Difficulties, plus DefaultAliases.
func DefaultVocabulary() *Vocabulary { return defaultVocabulary }

// vocabColumn maps a config word or column name to ColStatus, ColPri or ColDiff.
// IsVocabularyColumn reports whether a vocabulary can list values or
// aliases for the column name (status, priority, difficulty, by any of
// their names).
func IsVocabularyColumn(name string) bool { return vocabColumn(name) != "" }

func vocabColumn(name string) string {
	switch c := CanonicalColumn(name); c {
	case ColStatus, ColPri, ColDiff:
		return c
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "statuses":
		return ColStatus
	case "priorities":
		return ColPri
	case "difficulties":
		return ColDiff
	}
	return ""
}

// vocabKey is what values are matched by: lower case, trimmed, and ' ' or '-' as '_'.
func vocabKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.ContainsAny(s, " -") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }), "_")
	}
	return s
}

// NewVocabulary checks a spec: values are non-empty and distinct (ignoring
// case), and every alias names an allowed value.
func NewVocabulary(s VocabularySpec) (*Vocabulary, error) {
	v := &Vocabulary{values: map[string][]string{}, lookup: map[string]map[string]string{}, canonicalize: s.Canonicalize, source: s.Source, statusesLine: s.StatusesLine}
	for _, c := range []struct {
		col  string
		list []string
		def  []string
	}{{ColStatus, s.Statuses, Statuses}, {ColPri, s.Priorities, Priorities}, {ColDiff, s.Difficulties, Difficulties}} {
		list := c.list
		if len(list) == 0 {
			list = c.def
		}
		m := map[string]string{}
		var vals []string
		for _, val := range list {
			val = strings.TrimSpace(val)
			k := vocabKey(val)
			if k == "" || k == "-" || strings.ContainsAny(val, "|\n") {
				return nil, fmt.Errorf("%w: %s value %q cannot be used in a cell", ErrInvalid, vocabNoun(c.col), val)
			}
			if prev, dup := m[k]; dup {
				return nil, fmt.Errorf("%w: %s values %q and %q are the same value", ErrInvalid, vocabNoun(c.col), prev, val)
			}
			m[k] = val
			vals = append(vals, val)
		}
		v.values[c.col] = vals
		for alias, target := range DefaultAliases[c.col] {
			if canon, ok := m[vocabKey(target)]; ok {
				if _, taken := m[vocabKey(alias)]; !taken {
					m[vocabKey(alias)] = canon
				}
			}
		}
		v.lookup[c.col] = m
	}
	cols := make([]string, 0, len(s.Aliases))
	for col := range s.Aliases {
		cols = append(cols, col)
	}
	sort.Strings(cols)
	for _, name := range cols {
		col := vocabColumn(name)
		if col == "" {
			return nil, fmt.Errorf("%w: aliases for %q: only status, priority and difficulty have aliases", ErrInvalid, name)
		}
		aliases := make([]string, 0, len(s.Aliases[name]))
		for a := range s.Aliases[name] {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
		for _, alias := range aliases {
			target := s.Aliases[name][alias]
			canon, ok := v.canonicalFor(col, target)
			if !ok {
				return nil, fmt.Errorf("%w: %s alias %q → %q: %q is not one of %s", ErrInvalid, vocabNoun(col), alias, target, target, strings.Join(v.values[col], ", "))
			}
			k := vocabKey(alias)
			if k == "" || k == "-" {
				return nil, fmt.Errorf("%w: %s alias %q cannot be used in a cell", ErrInvalid, vocabNoun(col), alias)
			}
			if slices.ContainsFunc(v.values[col], func(x string) bool { return vocabKey(x) == k }) && !strings.EqualFold(vocabKey(canon), k) {
				return nil, fmt.Errorf("%w: %s alias %q → %q: %q is itself a %s value", ErrInvalid, vocabNoun(col), alias, target, alias, vocabNoun(col))
			}
			v.lookup[col][k] = canon
		}
	}
	v.statuses, v.priorities, v.difficulties = v.values[ColStatus], v.values[ColPri], v.values[ColDiff]
	return v, nil
}

// canonicalFor finds the canonical spelling of an allowed value (not an alias).
func (v *Vocabulary) canonicalFor(col, s string) (string, bool) {
	k := vocabKey(s)
	for _, x := range v.values[col] {
		if vocabKey(x) == k {
			return x, true
		}
	}
	return "", false
}

func (v *Vocabulary) orDefault() *Vocabulary {
	if v == nil {
		return defaultVocabulary
	}
	return v
}

// Statuses, Priorities and Difficulties list the allowed values in order.
func (v *Vocabulary) Statuses() []string     { return slices.Clone(v.orDefault().values[ColStatus]) }
func (v *Vocabulary) Priorities() []string   { return slices.Clone(v.orDefault().values[ColPri]) }
func (v *Vocabulary) Difficulties() []string { return slices.Clone(v.orDefault().values[ColDiff]) }

// ComparePriority orders two priorities as the vocabulary lists them (P1
// first); an empty or unknown priority comes after every listed one (empty
// last), and two such compare as strings.
func (v *Vocabulary) ComparePriority(a, b string) int {
	ra, rb := v.PriorityRank(a), v.PriorityRank(b)
	if ra != rb {
		return ra - rb
	}
	if a == "" || b == "" {
		return strings.Compare(b, a) // "" after an unknown value
	}
	return strings.Compare(a, b)
}

// PriorityRank is a priority's place in the vocabulary's list (0 is the
// highest); an empty or unknown priority ranks after them all.
func (v *Vocabulary) PriorityRank(p string) int {
	vals := v.orDefault().values[ColPri]
	if i := slices.Index(vals, p); i >= 0 {
		return i
	}
	return len(vals)
}

// Canonicalize reports whether `validate --fix` should rewrite aliases.
func (v *Vocabulary) Canonicalize() bool { return v.orDefault().canonicalize }

// Source is the file the vocabulary was read from, "" for the defaults.
func (v *Vocabulary) Source() string { return v.orDefault().source }

// StatusesLine is the line of Source that lists the statuses (0: the
// config lists none, or there is no config).
func (v *Vocabulary) StatusesLine() int { return v.orDefault().statusesLine }

// Normalize maps a value of col (ColStatus, ColPri or ColDiff) to its
// canonical value; an unknown value wraps ErrInvalid and lists the valid ones.
// Other columns' values are returned trimmed.
func (v *Vocabulary) Normalize(col, s string) (string, error) {
	v = v.orDefault()
	var vals []string
	switch col {
	case ColStatus:
		vals = v.statuses
	case ColPri:
		vals = v.priorities
	case ColDiff:
		vals = v.difficulties
	default:
		return strings.TrimSpace(s), nil
	}
	for _, c := range vals { // the common case, without allocating a key
		if s == c {
			return c, nil
		}
	}
	if c, ok := v.lookup[col][vocabKey(s)]; ok {
		return c, nil
	}
	reason := "unknown " + vocabNoun(col)
	if v.source != "" {
		reason += " (the values come from " + v.source + ")"
	}
	return "", invalid(vocabNoun(col), s, reason, slices.Clone(vals))
}

// validList says which values a column allows, and where they come from.
func (v *Vocabulary) validList(col string) string {
	msg := "valid: " + strings.Join(v.values[col], ", ")
	if v.source != "" {
		msg += " (from " + v.source + ")"
	}
	return msg
}

func vocabNoun(col string) string {
	switch col {
	case ColStatus:
		return "status"
	case ColPri:
		return "priority"
	case ColDiff:
		return "difficulty"
	}
	return strings.ToLower(col)
}

// Status, Priority and Difficulty are Normalize for one column.
func (v *Vocabulary) Status(s string) (string, error)     { return v.Normalize(ColStatus, s) }
func (v *Vocabulary) Priority(s string) (string, error)   { return v.Normalize(ColPri, s) }
func (v *Vocabulary) Difficulty(s string) (string, error) { return v.Normalize(ColDiff, s) }

// isEmptyMark reports whether a cell's text is a dash that people write for
// "nothing here": '-' or an em dash. Such a cell reads as empty.
func isEmptyMark(s string) bool { return s == "-" || s == "—" || s == "–" }

// blankDash returns "" for an empty mark, else s.
func blankDash(s string) string {
	if isEmptyMark(s) {
		return ""
	}
	return s
}
