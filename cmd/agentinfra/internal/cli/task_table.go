package cli

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/matrix"
)

// writeTSV prints one tab-separated line per task, for scripts.
func writeTSV(w *bufio.Writer, tasks []matrix.Task) {
	clean := strings.NewReplacer("\t", " ", "\n", " ")
	for _, t := range tasks {
		for i, v := range [...]string{t.ID, t.Status, t.Priority, t.Difficulty, t.Mode} {
			if i > 0 {
				w.WriteByte('\t')
			}
			w.WriteString(v)
		}
		w.WriteByte('\t')
		for i, s := range t.Skills {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(s)
		}
		w.WriteByte('\t')
		for i, a := range t.Agents {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(a)
		}
		w.WriteByte('\t')
		if strings.ContainsAny(t.Description, "\t\n") {
			w.WriteString(clean.Replace(t.Description))
		} else {
			w.WriteString(t.Description)
		}
		w.WriteByte('\t')
		w.WriteString(t.Created)
		w.WriteByte('\t')
		w.WriteString(t.Updated)
		w.WriteByte('\n')
	}
}

const (
	tableGap = 2
	// descWanted is the description width the table gives up other columns for.
	descWanted = 20
	// listMin is as narrow as SKILLS or AGENTS shrink before they are dropped.
	listMin = 10
)

// tableColumn is one column of the task table: its header, its cells and
// the width it takes.
type tableColumn struct {
	head  string
	cells []string
	width int
}

// writeTable prints an aligned table that fits width (0: no limit). The
// description, last, gets what the other columns leave. When that is less
// than descWanted, SKILLS and then AGENTS shrink (cut with an ellipsis) to
// listMin, then AGENTS, SKILLS, UPDATED and DIFF are dropped in that order,
// until it is not; ID, STATUS, PRI and MODE are always whole.
//
// A task whose supervised run waits for a person (marks, by task ID) says
// so in its STATUS cell: "IN_PROGRESS (waiting: request 6)".
func writeTable(w io.Writer, tasks []matrix.Task, marks map[string]waiting.Mark, width int, color bool) {
	col := func(head string, cell func(matrix.Task) string) *tableColumn {
		c := &tableColumn{head: head, cells: make([]string, len(tasks)), width: len(head)}
		for i, t := range tasks {
			c.cells[i] = cell(t)
			c.width = max(c.width, displayWidth(c.cells[i]))
		}
		return c
	}
	var (
		id      = col("ID", func(t matrix.Task) string { return t.ID })
		status  = col("STATUS", func(t matrix.Task) string { return statusCell(t, marks) })
		pri     = col("PRI", func(t matrix.Task) string { return t.Priority })
		diff    = col("DIFF", func(t matrix.Task) string { return t.Difficulty })
		mode    = col("MODE", func(t matrix.Task) string { return t.Mode })
		skills  = col("SKILLS", func(t matrix.Task) string { return strings.Join(t.Skills, ",") })
		agents  = col("AGENTS", func(t matrix.Task) string { return strings.Join(t.Agents, " ") })
		updated = col("UPDATED", func(t matrix.Task) string { return t.Updated })
	)
	desc := col("DESCRIPTION", func(t matrix.Task) string {
		if strings.ContainsAny(t.Description, "\n\t") {
			return strings.Join(strings.Fields(t.Description), " ") // text over several lines (or <br>): one line
		}
		return t.Description
	})
	cols := []*tableColumn{id, status, pri, diff, mode, skills, agents, updated}
	descMax := -1 // no limit
	if width > 0 {
		fitColumns(&cols, width, skills, agents, updated, diff)
		descMax = max(width-usedWidth(cols), 1)
	}
	cols = append(cols, desc)

	line := func(cells func(c *tableColumn) string, header bool) {
		var b strings.Builder
		for j, c := range cols {
			s := cells(c)
			last := j == len(cols)-1
			switch {
			case !last:
				s = truncate(s, c.width) // a shrunk list
			case descMax >= 0:
				s = truncate(s, descMax)
			}
			styled := s
			switch {
			case header:
				styled = colorize(color, "1", s)
			case c == status:
				word, _, _ := strings.Cut(s, " ")
				styled = colorize(color, statusColors[word], s)
			case c == pri && s == "P1":
				styled = colorize(color, "1;31", s)
			case c == id:
				styled = colorize(color, "2", s)
			}
			b.WriteString(styled)
			if !last {
				b.WriteString(strings.Repeat(" ", max(0, c.width-displayWidth(s))+tableGap))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
	line(func(c *tableColumn) string { return c.head }, true)
	for i := range tasks {
		line(func(c *tableColumn) string { return c.cells[i] }, false)
	}
}

// statusCell is a task's status, with what its run waits for.
func statusCell(t matrix.Task, marks map[string]waiting.Mark) string {
	if m, ok := marks[t.ID]; ok {
		return t.Status + " (waiting: " + m.Label() + ")"
	}
	return t.Status
}

// usedWidth is what the columns before the description take, gaps included.
func usedWidth(cols []*tableColumn) int {
	n := 0
	for _, c := range cols {
		n += c.width + tableGap
	}
	return n
}

// fitColumns makes room for the description: it shrinks the lists, then
// drops columns in the order given, until the description gets descWanted.
func fitColumns(cols *[]*tableColumn, width int, skills, agents *tableColumn, drop ...*tableColumn) {
	short := func() bool { return width-usedWidth(*cols) < descWanted }
	for _, c := range []*tableColumn{skills, agents} {
		if short() && c.width > listMin {
			c.width = max(listMin, c.width-(descWanted-(width-usedWidth(*cols))))
		}
	}
	for _, c := range append([]*tableColumn{agents, skills}, drop...) {
		if !short() {
			return
		}
		if i := slices.Index(*cols, c); i >= 0 {
			*cols = slices.Delete(*cols, i, i+1)
		}
	}
}

// truncate cuts s to at most n terminal columns, the cut marked with "…":
// by display width, so that CJK characters and emoji (two columns each)
// do not run past the table's edge.
func truncate(s string, n int) string {
	if displayWidth(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return runewidth.Truncate(s, n, "…")
}

// displayWidth is how many terminal columns s takes.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return runewidth.StringWidth(s)
		}
	}
	return len(s) // ASCII: one column a byte (nearly every cell)
}
