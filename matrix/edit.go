package matrix

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Update lists the changes to one task; nil and empty fields leave a value alone.
type Update struct {
	Status, Priority, Difficulty, Mode, Description *string
	Skills                                          *[]string
	// AddAgents are @mentions (the @ is optional) added to Agents unless present.
	AddAgents []string
	// Set assigns any column by header name: canonical, alias or extra column.
	Set map[string]string
}

// Str is a helper for building Updates: matrix.Update{Status: matrix.Str("DONE")}.
func Str(s string) *string { return &s }

// splice replaces src[sp] with repl and re-parses the result in place.
func (d *Doc) splice(sp span, repl string) {
	buf := make([]byte, 0, len(d.src)-(sp.end-sp.start)+len(repl))
	buf = append(buf, d.src[:sp.start]...)
	buf = append(buf, repl...)
	buf = append(buf, d.src[sp.end:]...)
	*d = *ParseWith(buf, d.vocab)
}

// NotFound is the error for an unknown ID: an agenterr.NotFound with close
// matches, or the reason there are no IDs at all. For the ID of a row that could
// not be read it wraps ErrUnreadable instead and says where the row is and why.
func (d *Doc) NotFound(id string) error {
	if r := d.unread[id]; r != nil && len(d.byID(id)) == 0 {
		return d.unreadableErr(r)
	}
	if err := d.swallowedErr(id); err != nil {
		return err
	}
	e := &agenterr.Error{Kind: agenterr.NotFound, Field: "id", What: "task", Value: id, Suggestions: Suggest(id, d.IDs())}
	if nt := d.RequireTaskTable(); nt != nil && len(e.Suggestions) == 0 {
		e.Reason = nt.Error() // no IDs at all, e.g. an older-format file
	}
	return e
}

// FindTask reads one task from a matrix's bytes. On a large matrix it is
// faster than Parse(src).Lookup(id): rows with another ID are dropped before
// parsing (Query.Select). src is kept: do not modify it afterwards.
func FindTask(src []byte, id string) (Task, error) { return FindTaskWith(src, id, nil) }

// FindTaskWith is FindTask for a matrix with its own vocabulary (nil: the default).
func FindTaskWith(src []byte, id string, v *Vocabulary) (Task, error) {
	switch tasks := (Query{ID: id}).SelectWith(src, v); {
	case len(tasks) == 1:
		return tasks[0], nil
	case len(tasks) > 1:
		lines := make([]int, len(tasks))
		for i, t := range tasks {
			lines[i] = t.Line
		}
		return Task{}, duplicateErr(id, lines)
	}
	return ParseWith(src, v).Lookup(id) // the error, with close matches
}

// Lookup returns the task with the given ID, or NotFound's error. An ID on
// more than one row is refused (ErrDuplicateID): a reader that showed the
// first would hand an agent the wrong task as readily as the right one.
func (d *Doc) Lookup(id string) (Task, error) {
	if rs := d.byID(id); len(rs) > 1 {
		return Task{}, duplicateErr(id, rowLines(rs))
	}
	if t, ok := d.Task(id); ok {
		return t, nil
	}
	return Task{}, d.NotFound(id)
}

// duplicateErr refuses an ID that is on the rows starting at lines.
func duplicateErr(id string, lines []int) error {
	where := make([]string, len(lines))
	for i, l := range lines {
		where[i] = strconv.Itoa(l)
	}
	return &agenterr.Error{Kind: agenterr.Refused, Reason: fmt.Sprintf("ID %s is on %d rows (lines %s); give all but one of them a new ID first (agentinfra validate lists every duplicate)",
		id, len(lines), strings.Join(where, ", ")), Field: "id", Err: ErrDuplicateID}
}

func rowLines(rs []*row) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = int(r.line)
	}
	return out
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

func refusedf(format string, a ...any) error { return refused(fmt.Sprintf(format, a...)) }

// normalizeValue checks a value for a canonical column and returns it as
// written: Status, Pri and Diff take aliases and get their canonical value.
func (d *Doc) normalizeValue(col, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch col {
	case ColID:
		if !ValidID(v) {
			return "", invalid("id", v, "malformed: "+idRule, nil)
		}
	case ColPri, ColDiff:
		if v == "" {
			return "", nil // `--set Pri=` clears it: both may be empty
		}
		return d.vocab.Normalize(col, v)
	case ColStatus:
		return d.vocab.Normalize(col, v)
	case ColMode:
		if v != "" && !ValidName(v) {
			return "", invalid("mode", v, "must be a file name (letters, digits, '-', '_', '.')", nil)
		}
	case ColSkills:
		parts := splitSkills(v)
		for _, s := range parts {
			if !ValidName(s) {
				return "", invalid("skills", s, "must be a folder name (letters, digits, '-', '_', '.')", nil)
			}
		}
		return strings.Join(parts, ", "), nil
	case ColAgents:
		var out []string
		for _, a := range splitAgents(v) {
			m, err := NormalizeMention(a)
			if err != nil {
				return "", err
			}
			out = append(out, m)
		}
		return strings.Join(out, " "), nil
	case ColCreated, ColUpdated:
		if !validDateTime(v) {
			return "", invalid(strings.ToLower(col), v, dateProblem(v), nil)
		}
	}
	return v, nil
}

// UpdateTask applies u to the row of id, sets Updated to now in the style
// the cell had (a date; a date and time to the minute or second; YYMMDD),
// and rewrites only the cells that change; the rest of the line keeps its
// bytes. A cell that holds a dash for "empty" gets the new value in its place.
func (d *Doc) UpdateTask(id string, u Update, now time.Time) (Task, error) {
	r := d.rowWithID(id)
	if r == nil {
		return Task{}, d.NotFound(id)
	}
	if r.unreadable != 0 {
		return Task{}, refusedf("task %s on line %d could not be read, so it cannot be changed: %s", id, r.line, d.problemOf(r))
	}
	if rs := d.byID(id); len(rs) > 1 {
		return Task{}, duplicateErr(id, rowLines(rs))
	}
	values := map[int]string{} // cell index → new value
	set := func(name, v string) error {
		col, idx, err := r.tbl.resolveColumn(name)
		if err != nil {
			return err
		}
		if err := checkCellValue(fieldName(col, name), v); err != nil {
			return err
		}
		if col != "" {
			if v, err = d.normalizeValue(col, v); err != nil {
				return err
			}
		}
		values[idx] = v
		return nil
	}
	pairs := []struct {
		col string
		v   *string
	}{{ColStatus, u.Status}, {ColPri, u.Priority}, {ColDiff, u.Difficulty}, {ColMode, u.Mode}, {ColDescription, u.Description}}
	for _, p := range pairs {
		if p.v != nil {
			if err := set(p.col, *p.v); err != nil {
				return Task{}, err
			}
		}
	}
	if u.Skills != nil {
		if err := set(ColSkills, strings.Join(*u.Skills, ",")); err != nil {
			return Task{}, err
		}
	}
	keys := make([]string, 0, len(u.Set))
	for k := range u.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if CanonicalColumn(k) == ColID {
			return Task{}, invalid("column", k, "the ID column cannot be changed", nil)
		}
		if err := set(k, u.Set[k]); err != nil {
			return Task{}, err
		}
	}
	if len(u.AddAgents) > 0 {
		current := d.taskOf(r).Agents
		agents := append([]string{}, current...)
		for _, a := range u.AddAgents {
			m, err := NormalizeMention(a)
			if err != nil {
				return Task{}, err
			}
			if !containsFold(agents, m) {
				agents = append(agents, m)
			}
		}
		sep := " "
		if i, ok := r.tbl.colIndex[ColAgents]; ok && i < len(r.cells()) && strings.Contains(string(d.src[r.cells()[i].text.start:r.cells()[i].text.end]), ",") {
			sep = ", "
		}
		if len(agents) != len(current) {
			_, idx, err := r.tbl.resolveColumn(ColAgents)
			if err != nil {
				return Task{}, err
			}
			values[idx] = strings.Join(agents, sep)
		}
	}
	if i, ok := r.tbl.colIndex[ColUpdated]; ok {
		if _, explicit := values[i]; !explicit {
			values[i] = stampLike(d.cell(r, ColUpdated), now)
		}
	}
	line := d.rewriteRow(r, values)
	if line == string(d.src[r.span.start:r.span.end]) {
		return d.taskOf(r), nil
	}
	old, nrows, nproblems, errs := *d, len(d.rows), len(d.problems), countErrors(d.diags)
	d.splice(r.span.wide(), line)
	// A value must never change the table around the row; guardRowEnds
	// prevents the known ways, this catches any other.
	t, ok := d.Task(id)
	if !ok || t.Line != int(r.line) || len(d.rows) != nrows || len(d.problems) != nproblems {
		*d = old
		return Task{}, refusedf("the new values would change the table structure at line %d (task %s); nothing was changed", r.line, id)
	}
	// A row with errors may be changed, so that the tool can repair it,
	// as long as the change adds no error.
	if countErrors(d.diags) > errs {
		after := d.rowErrors(d.byID(id)[0])
		*d = old
		return Task{}, refusedf("the change would add errors to task %s (line %d): %s; nothing was changed", id, r.line, strings.Join(after, "; "))
	}
	return t, nil
}

// rowErrors lists the error diagnostics on the lines of r as "line N: message".
func (d *Doc) rowErrors(r *row) []string {
	last := int(max(r.endLine, r.line))
	var out []string
	for _, dg := range d.Diagnostics() {
		if dg.Severity == SeverityError && dg.Line >= int(r.line) && dg.Line <= last {
			out = append(out, fmt.Sprintf("line %d: %s", dg.Line, dg.Message))
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// resolveColumn finds a column of the table by canonical name, alias or header text.
func (t *table) resolveColumn(name string) (canonical string, idx int, err error) {
	if c := CanonicalColumn(name); c != "" {
		if i, ok := t.colIndex[c]; ok {
			return c, i, nil
		}
	} else {
		for i, col := range t.cols {
			if strings.EqualFold(col.name, strings.TrimSpace(name)) {
				return "", i, nil
			}
		}
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return "", 0, invalid("column", name, fmt.Sprintf("the task table on line %d has no such column (add it to the header to use it)", t.headerLine), names)
}

// rewriteRow returns the row's line with the given cells (by index) replaced.
func (d *Doc) rewriteRow(r *row, values map[int]string) string {
	var b strings.Builder
	pos := int(r.span.start)
	for i, c := range r.cells() {
		v, ok := values[i]
		if !ok {
			continue
		}
		v = escapeCell(v)
		if c.text.start == c.text.end {
			// Blank cell: write " v " in place of its white space, which
			// runs back from the closing pipe to the opening one.
			rawStart := int(c.text.start)
			for rawStart > pos && isSpace(d.src[rawStart-1]) {
				rawStart--
			}
			b.Write(d.src[pos:rawStart])
			b.WriteString(" " + v + " ")
			pos = int(c.text.end)
			continue
		}
		b.Write(d.src[pos:c.text.start])
		b.WriteString(v)
		if strings.HasSuffix(v, `\`) && int(c.text.end) < len(d.src) && d.src[c.text.end] == '|' {
			b.WriteByte(' ') // keep a trailing backslash from escaping the pipe
		}
		pos = int(c.text.end)
	}
	b.Write(d.src[pos:r.span.end])
	first, okFirst := values[0]
	last, okLast := values[len(r.cells())-1]
	orig := strings.Trim(string(d.src[r.span.start:r.span.end]), " \t")
	lead := okFirst && needsLeadingPipe(escapeCell(first)) && !strings.HasPrefix(orig, "|")
	trail := okLast && needsTrailingPipe(escapeCell(last)) && (len(orig) < 2 || !strings.HasSuffix(orig, "|"))
	return guardRowEnds(b.String(), lead, trail)
}

// guardRowEnds adds the outer pipes a row without them needs once its first
// or last cell holds a value that GFM would misread there.
func guardRowEnds(line string, lead, trail bool) string {
	if lead {
		body := strings.TrimLeft(line, " \t")
		line = line[:len(line)-len(body)] + "| " + body
	}
	if trail {
		line = strings.TrimRight(line, " \t") + " |"
	}
	return line
}

// needsLeadingPipe reports whether an escaped value, first on a row line
// without a leading pipe, would not read back: empty (the cell vanishes) or
// the start of a block that interrupts the table's paragraph (heading, list,
// quote, fence, HTML block), which would end the table there.
func needsLeadingPipe(v string) bool {
	if v == "" || strings.IndexByte("#>-+*`~<=_", v[0]) >= 0 {
		return true
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i > 0 && i < len(v) && (v[i] == '.' || v[i] == ')') // ordered list
}

// needsTrailingPipe reports whether an escaped value, last on a row line
// without a trailing pipe, would not read back: empty, or ending in an
// escaped pipe, which GFM strips as if it were the outer pipe.
func needsTrailingPipe(v string) bool { return v == "" || strings.HasSuffix(v, "|") }
