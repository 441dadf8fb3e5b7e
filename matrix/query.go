package matrix

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Sorts lists the orders Query.Sort accepts; a leading "-" reverses one.
// "" and "file" keep file order; priority is P1 first; created is oldest
// first; updated is most recently updated first. Ties keep file order.
var Sorts = []string{"file", "priority", "created", "updated"}

// Query selects and orders tasks, as `agentinfra task list` and the MCP task
// tool do. Zero fields match everything. Matching is case-insensitive.
type Query struct {
	ID       string   `json:"id,omitempty"`       // exactly this task ID
	Status   []string `json:"status,omitempty"`   // any of these statuses
	Priority []string `json:"priority,omitempty"` // any of these priorities
	Mode     string   `json:"mode,omitempty"`
	Agent    string   `json:"agent,omitempty"` // "@name" or "name"
	Skill    string   `json:"skill,omitempty"`
	// Text matches when every word appears in the ID, description, mode,
	// skills, agents or an extra column.
	Text  string `json:"text,omitempty"`
	Sort  string `json:"sort,omitempty"`
	Limit int    `json:"limit,omitempty"` // 0 means no limit
	// Ready keeps only TODO tasks whose Deps are all DONE (see ReadyTasks).
	Ready bool `json:"ready,omitempty"`
}

// Normalize checks the query and writes its values the way the matrix does
// (statuses upper case, priorities P1..P4, mentions with @). Refused values
// wrap ErrInvalid and list the valid ones.
func (q Query) Normalize() (Query, error) { return q.NormalizeWith(nil) }

// NormalizeWith is Normalize with a workspace's vocabulary (nil: the default).
func (q Query) NormalizeWith(vocab *Vocabulary) (Query, error) {
	out := q
	out.Status = nil
	for _, s := range splitValues(q.Status) {
		v, err := vocab.Status(s)
		if err != nil {
			return q, err
		}
		if !slices.Contains(out.Status, v) {
			out.Status = append(out.Status, v)
		}
	}
	out.Priority = nil
	for _, p := range splitValues(q.Priority) {
		v, err := vocab.Priority(p)
		if err != nil {
			return q, err
		}
		if !slices.Contains(out.Priority, v) {
			out.Priority = append(out.Priority, v)
		}
	}
	out.Mode = strings.TrimSpace(q.Mode)
	out.Skill = strings.TrimSpace(q.Skill)
	out.Text = strings.TrimSpace(q.Text)
	if a := strings.TrimSpace(q.Agent); a != "" {
		m, err := NormalizeMention(a)
		if err != nil {
			return q, err
		}
		out.Agent = m
	}
	out.Sort = strings.ToLower(strings.TrimSpace(q.Sort))
	if s := strings.TrimPrefix(out.Sort, "-"); s != "" && !slices.Contains(Sorts, s) {
		return q, invalid("sort", q.Sort, "unknown sort (prefix - to reverse)", Sorts)
	}
	if q.Limit < 0 {
		return q, invalid("limit", strconv.Itoa(q.Limit), "must be 0 (no limit) or more", nil)
	}
	return out, nil
}

func splitValues(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// Match reports whether t passes the query's filters. Values the query
// cannot normalize are compared as written.
func (q Query) Match(t Task) bool { return q.lenientWith(nil).match(t) }

// lenientWith normalizes what it can with vocab and keeps the rest as written.
func (q Query) lenientWith(vocab *Vocabulary) Query {
	n := q
	n.Status, n.Priority = nil, nil
	for _, s := range splitValues(q.Status) {
		if v, err := vocab.Status(s); err == nil {
			s = v
		}
		n.Status = append(n.Status, s)
	}
	for _, p := range splitValues(q.Priority) {
		if v, err := vocab.Priority(p); err == nil {
			p = v
		}
		n.Priority = append(n.Priority, p)
	}
	n.ID = strings.TrimSpace(q.ID)
	n.Mode = strings.TrimSpace(q.Mode)
	n.Skill = strings.TrimSpace(q.Skill)
	if a := strings.TrimSpace(q.Agent); a != "" {
		n.Agent = "@" + strings.TrimPrefix(a, "@")
	}
	n.Text = strings.ToLower(strings.TrimSpace(q.Text))
	return n
}

func containsFoldList(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// match assumes q went through lenient.
func (q Query) match(t Task) bool {
	if q.ID != "" && t.ID != q.ID {
		return false
	}
	if len(q.Status) > 0 && !containsFoldList(q.Status, t.Status) {
		return false
	}
	if len(q.Priority) > 0 && !containsFoldList(q.Priority, t.Priority) {
		return false
	}
	if q.Mode != "" && !strings.EqualFold(q.Mode, t.Mode) {
		return false
	}
	if q.Agent != "" && !containsFoldList(t.Agents, q.Agent) {
		return false
	}
	if q.Skill != "" && !containsFoldList(t.Skills, q.Skill) {
		return false
	}
	if q.Text != "" {
		hay := strings.ToLower(strings.Join([]string{t.ID, t.Description, t.Mode, strings.Join(t.Skills, " "), strings.Join(t.Agents, " ")}, "\x00"))
		for _, v := range t.Extra {
			hay += "\x00" + strings.ToLower(v)
		}
		for _, w := range strings.Fields(q.Text) {
			if !strings.Contains(hay, w) {
				return false
			}
		}
	}
	return true
}

// Apply returns the tasks that match, sorted and limited. It never modifies
// tasks and returns a non-nil slice. Call Normalize first to refuse bad values.
func (q Query) Apply(tasks []Task) []Task { return q.applyWith(tasks, nil) }

// ApplyWith is Apply for a matrix with its own vocabulary: its statuses and
// priorities, in its order for --sort priority.
func (q Query) ApplyWith(tasks []Task, v *Vocabulary) []Task { return q.applyWith(tasks, v) }

func (q Query) applyWith(tasks []Task, vocab *Vocabulary) []Task {
	return q.filterWith(tasks, make([]Task, 0, len(tasks)/4), vocab)
}

// filterWith appends the selected tasks to out (which may share tasks' array
// when the caller owns it), then sorts and limits.
func (q Query) filterWith(tasks, out []Task, vocab *Vocabulary) []Task {
	n := q.lenientWith(vocab)
	ready := readySet(q.Ready, tasks, vocab)
	for _, t := range tasks {
		if n.match(t) && (ready == nil || ready[t.ID]) {
			out = append(out, t)
		}
	}
	sortTasks(out, q.Sort, vocab)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// sortTasks sorts ts by a Sorts key, stable (file order within a key). An
// empty value (no priority, no date) sorts last whichever the direction:
// it is not "before P1", and a reversed list does not put it first either.
func sortTasks(ts []Task, by string, v *Vocabulary) {
	by = strings.ToLower(strings.TrimSpace(by))
	rev := strings.HasPrefix(by, "-")
	by = strings.TrimPrefix(by, "-")
	var key func(t Task) string
	newestFirst := false
	switch by {
	case "priority":
		key = func(t Task) string { return t.Priority }
	case "created":
		key = func(t Task) string { return sortableDate(t.Created) }
	case "updated":
		key, newestFirst = func(t Task) string { return sortableDate(t.Updated) }, true
	default:
		if rev {
			slices.Reverse(ts)
		}
		return
	}
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := key(ts[i]), key(ts[j])
		switch {
		case a == "" || b == "":
			return a != "" && b == ""
		case by == "priority":
			c := v.ComparePriority(a, b)
			if rev {
				c = -c
			}
			return c < 0
		}
		if newestFirst != rev {
			return a > b
		}
		return a < b
	})
}

// sortableDate writes a Created or Updated value so that strings compare as
// times do: YYMMDD as 20YY-MM-DD; the other forms already do.
func sortableDate(s string) string {
	if l, ok := dateLayoutOf(s); ok && l == layoutCompactDate {
		return "20" + s[:2] + "-" + s[2:4] + "-" + s[4:]
	}
	return s
}
