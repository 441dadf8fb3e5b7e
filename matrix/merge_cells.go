package matrix

import (
	"slices"
	"strings"
	"time"
)

// mergeCell merges one cell of column key c: b in base, o and t on the
// sides. ok is false for a conflict: both sides changed the cell
// differently, and the column has no rule that merges the two.
func mergeCell(c, b, o, t string) (string, bool) {
	switch {
	case o == t, t == b:
		return o, true
	case o == b:
		return t, true
	}
	switch {
	case c == "="+ColUpdated:
		return laterDate(o, t)
	case c == "="+ColSkills, c == "="+ColAgents, slices.Contains(depsHeaders, c):
		return mergeSet(c, b, o, t), true
	}
	return "", false
}

// laterDate returns the later of two dates (an empty or dash cell is
// earlier than any date); false when one is no date.
func laterDate(o, t string) (string, bool) {
	at := func(s string) (time.Time, bool) {
		if s == "" || isEmptyMark(s) {
			return time.Time{}, true
		}
		l, ok := dateLayoutOf(s)
		if !ok {
			return time.Time{}, false
		}
		v, err := time.Parse(l, s)
		return v, err == nil
	}
	to, ok1 := at(o)
	tt, ok2 := at(t)
	if !ok1 || !ok2 {
		return "", false
	}
	if tt.After(to) {
		return t, true
	}
	return o, true
}

// setItems splits a set cell into its values; an empty or dash cell holds none.
func setItems(c, s string) []string {
	if isEmptyMark(s) {
		return nil
	}
	switch c {
	case "=" + ColAgents:
		return splitAgents(s)
	case "=" + ColSkills:
		return splitSkills(s)
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
}

// mergeSet merges a set cell: ours' values that theirs did not remove,
// then theirs' additions, in each side's order; written with ours'
// separator.
func mergeSet(c, b, o, t string) string {
	eq := func(x, y string) bool { return x == y }
	if c == "="+ColAgents {
		eq = strings.EqualFold
	}
	has := func(list []string, s string) bool {
		return slices.ContainsFunc(list, func(x string) bool { return eq(x, s) })
	}
	bs, os, ts := setItems(c, b), setItems(c, o), setItems(c, t)
	var out []string
	for _, x := range os {
		if !(has(bs, x) && !has(ts, x)) && !has(out, x) {
			out = append(out, x)
		}
	}
	for _, x := range ts {
		if !has(bs, x) && !has(out, x) {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		switch {
		case len(os) == 0:
			return o
		case len(ts) == 0:
			return t
		}
		return ""
	}
	return strings.Join(out, setSeparator(c, o, t))
}

// setSeparator is the separator a set cell is written with: ours' (or
// theirs', when ours holds one value), else the column's usual one.
func setSeparator(c string, cells ...string) string {
	for _, s := range cells {
		switch {
		case strings.Contains(s, ", "):
			return ", "
		case strings.Contains(s, ","):
			return ","
		case strings.Contains(s, "; "):
			return "; "
		case strings.TrimSpace(s) != "" && strings.ContainsAny(strings.TrimSpace(s), " \t"):
			return " "
		}
	}
	if c == "="+ColAgents {
		return " "
	}
	return ", "
}
