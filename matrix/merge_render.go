package matrix

import "strings"

// Writing a merged row (or header) into the bytes of a row that exists: the
// line is cut at its pipes into slots, each slot the padding before a
// cell's text, the text, and the padding after it. A changed cell gets the
// new text between its own padding; a column the line lacks gets a slot in
// the line's style; a column the result drops loses its slot. Everything
// else, indentation and outer pipes included, keeps its bytes.

type slot struct{ pre, text, post string }

type lineSlots struct {
	prefix  string // indentation and the leading pipe
	slots   []slot
	closing bool   // the line ends with a pipe
	suffix  string // what follows the closing pipe
	spaced  bool   // cells are padded with spaces (| a |), not tight (|a|)
}

// splitSlots cuts the line src[ls:le] (a row's span: one line or more) at
// the pipes that close its cells.
func splitSlots(src string, ls, le int, cells []cellSpan) lineSlots {
	var l lineSlots
	i := ls
	for i < le && isSpace(src[i]) {
		i++
	}
	start := i
	if i < le && src[i] == '|' {
		start = i + 1
	}
	l.prefix = src[ls:start]
	for k, c := range cells {
		ts, te := int(c.text.start), int(c.text.end)
		closeAt := -1
		if j := strings.IndexByte(src[te:le], '|'); j >= 0 {
			closeAt = te + j
		}
		end := closeAt
		if end < 0 {
			end = le
			for end > te && isSpace(src[end-1]) {
				end--
			}
		}
		if ts < start { // a blank cell whose text sits at its closing pipe
			ts = start
		}
		if ts > end {
			ts = end
		}
		if te > end {
			te = end
		}
		if te < ts {
			te = ts
		}
		l.slots = append(l.slots, slot{pre: src[start:ts], text: src[ts:te], post: src[te:end]})
		if k == 0 {
			l.spaced = ts > start && src[start] == ' ' || ts == te && end > start
		}
		if closeAt < 0 {
			l.suffix = src[end:le]
			return l
		}
		start = closeAt + 1
		if k == len(cells)-1 {
			l.closing = true
			l.suffix = src[start:le]
		}
	}
	return l
}

// with returns the slot holding text v instead of its own.
func (s slot) with(v string, spaced bool) slot {
	if s.text == v {
		return s
	}
	if s.text == "" && v != "" && strings.TrimSpace(s.pre+s.post) == "" {
		if spaced || s.pre+s.post != "" {
			return slot{pre: " ", text: v, post: " "}
		}
		return slot{text: v}
	}
	s.text = v
	if s.post == "" && strings.HasSuffix(v, `\`) {
		s.post = " " // keep a trailing backslash from escaping the pipe
	}
	return s
}

// newSlot is a slot for a column the line lacks, in the line's style.
func newSlot(v string, spaced bool) slot {
	switch {
	case spaced:
		return slot{pre: " ", text: v, post: " "}
	case v == "":
		return slot{pre: " "} // `||` at a line's end is no cell
	}
	return slot{text: v}
}

func (l lineSlots) render(slots []slot) string {
	var b strings.Builder
	b.WriteString(l.prefix)
	for i, s := range slots {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(s.pre)
		b.WriteString(s.text)
		b.WriteString(s.post)
	}
	if l.closing {
		b.WriteByte('|')
	}
	b.WriteString(l.suffix)
	return b.String()
}

// relayout writes vals, the texts of the columns want (keys), into the line
// whose slots are l and whose columns are have (keys). A column of want that
// have lacks gets a new slot in the line's style.
func (l lineSlots) relayout(have, want, vals []string) string {
	idx := make(map[string]int, len(have))
	for i, k := range have {
		idx[k] = i
	}
	out := make([]slot, len(want))
	for i, k := range want {
		if j, ok := idx[k]; ok && j < len(l.slots) {
			out[i] = l.slots[j].with(vals[i], l.spaced)
		} else {
			out[i] = newSlot(vals[i], l.spaced)
		}
	}
	if !l.closing && len(out) > len(l.slots) && len(l.slots) > 0 {
		// A line without a closing pipe ends at its last cell: keep the
		// padding of the cells before it.
		for i := range out {
			if out[i].post == "" && i < len(out)-1 && l.spaced {
				out[i].post = " "
			}
		}
	}
	return l.render(out)
}
