// Package matrix reads, validates and edits .agent/DEVELOPMENT_MATRIX.md.
//
// The file is a Markdown document owned by people; agentinfra owns only the task
// rows inside its task tables. Parse keeps the original bytes, and every edit is
// spliced into them, so everything that is not a changed row stays byte for byte.
package matrix

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Canonical column names. Header cells match case-insensitively; see columnAliases.
const (
	ColID          = "ID"
	ColStatus      = "Status"
	ColPri         = "Pri"
	ColDiff        = "Diff"
	ColMode        = "Mode"
	ColSkills      = "Skills"
	ColAgents      = "Agents"
	ColDescription = "Description"
	ColCreated     = "Created"
	ColUpdated     = "Updated"
)

// CanonicalColumns is the header order agentinfra writes for new tables.
var CanonicalColumns = []string{ColID, ColStatus, ColPri, ColDiff, ColMode, ColSkills, ColAgents, ColDescription, ColCreated, ColUpdated}

// CanonicalHeader is the header and alignment row of a new task table.
const CanonicalHeader = "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
	"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n"

var columnAliases = map[string]string{
	"id": ColID, "status": ColStatus, "pri": ColPri, "priority": ColPri, "diff": ColDiff,
	"difficulty": ColDiff, "mode": ColMode, "skills": ColSkills, "agents": ColAgents,
	"description": ColDescription, "created": ColCreated, "updated": ColUpdated,
}

// CanonicalColumn maps a header cell to its canonical name, or "" for an extra column.
func CanonicalColumn(header string) string {
	return columnAliases[strings.ToLower(strings.TrimSpace(header))]
}

var (
	Statuses     = []string{"TODO", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE"}
	Priorities   = []string{"P1", "P2", "P3", "P4"}
	Difficulties = []string{"easy", "med", "hard"}
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound    = errors.New("task not found")
	ErrInvalid     = errors.New("invalid value")
	ErrLockTimeout = errors.New("timed out waiting for the matrix lock")
	ErrRefused     = errors.New("change refused")
)

// Task is one row of a task table, with values normalized.
type Task struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Priority    string            `json:"priority"`
	Difficulty  string            `json:"difficulty"`
	Mode        string            `json:"mode"`
	Skills      []string          `json:"skills"`
	Agents      []string          `json:"agents"`
	Description string            `json:"description"`
	Created     string            `json:"created"`
	Updated     string            `json:"updated"`
	Extra       map[string]string `json:"extra,omitempty"` // nil when the table has no extra columns
	Line        int               `json:"line"`
	// EndLine is the last line of a row that goes on over several lines
	// (a line break inside a cell); 0 for a row on one line.
	EndLine int `json:"end_line,omitempty"`
}

func (t Task) clone() Task {
	t.Skills = append([]string{}, t.Skills...)
	t.Agents = append([]string{}, t.Agents...)
	if t.Extra != nil {
		extra := make(map[string]string, len(t.Extra))
		for k, v := range t.Extra {
			extra[k] = v
		}
		t.Extra = extra
	}
	return t
}

// Field returns the value of a column by name (canonical, alias or extra header).
func (t Task) Field(name string) (string, bool) {
	switch CanonicalColumn(name) {
	case ColID:
		return t.ID, true
	case ColStatus:
		return t.Status, true
	case ColPri:
		return t.Priority, true
	case ColDiff:
		return t.Difficulty, true
	case ColMode:
		return t.Mode, true
	case ColSkills:
		return strings.Join(t.Skills, ", "), true
	case ColAgents:
		return strings.Join(t.Agents, " "), true
	case ColDescription:
		return t.Description, true
	case ColCreated:
		return t.Created, true
	case ColUpdated:
		return t.Updated, true
	}
	for k, v := range t.Extra {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// ValidID reports whether s is a task ID: six lowercase hex characters.
func ValidID(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < 6; i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func normalizeEnum(kind, s string, valid []string) (string, error) {
	for _, c := range valid {
		if s == c {
			return c, nil
		}
	}
	v := strings.TrimSpace(s)
	for _, c := range valid {
		if strings.EqualFold(v, c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: unknown %s %q; valid: %s", ErrInvalid, kind, s, strings.Join(valid, ", "))
}

// NormalizeStatus accepts a status in any case (and "in progress"/"in-progress").
func NormalizeStatus(s string) (string, error) {
	for _, c := range Statuses {
		if s == c {
			return c, nil
		}
	}
	v := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.TrimSpace(s))
	return normalizeEnum("status", v, Statuses)
}

// NormalizePriority accepts P1..P4 in any case, or a bare digit.
func NormalizePriority(s string) (string, error) {
	v := strings.TrimSpace(s)
	if len(v) == 1 && v[0] >= '1' && v[0] <= '4' {
		v = "P" + v
	}
	return normalizeEnum("priority", v, Priorities)
}

// NormalizeDifficulty accepts easy, med (or medium) and hard in any case.
func NormalizeDifficulty(s string) (string, error) {
	v := strings.TrimSpace(s)
	if strings.EqualFold(v, "medium") {
		v = "med"
	}
	return normalizeEnum("difficulty", v, Difficulties)
}

const dateLayout = "2006-01-02"

var updatedLayouts = []string{dateLayout, "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339}

// validDate checks YYYY-MM-DD by hand: time.Parse dominates parsing otherwise.
func validDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	n := func(a, b int) int {
		v := 0
		for i := a; i < b; i++ {
			if s[i] < '0' || s[i] > '9' {
				return -1
			}
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	y, m, d := n(0, 4), n(5, 7), n(8, 10)
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

func validDateTime(s string) bool {
	if validDate(s) {
		return true
	}
	for _, l := range updatedLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

// Today formats a time the way Created and Updated are written.
func Today(now time.Time) string { return now.Format(dateLayout) }

var slugRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidName reports whether a mode or skill slug is usable as a file name.
func ValidName(s string) bool { return slugRe.MatchString(s) && !strings.Contains(s, "..") }

var mentionRe = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// NormalizeMention turns "x" or "@x" into "@x" and checks it.
func NormalizeMention(s string) (string, error) {
	v := strings.TrimSpace(s)
	if !strings.HasPrefix(v, "@") {
		v = "@" + v
	}
	if !mentionRe.MatchString(v) {
		return "", fmt.Errorf("%w: agent %q is not an @mention (letters, digits, '-', '_', '.')", ErrInvalid, s)
	}
	return v, nil
}

// splitList splits s at any of seps, trimming and dropping empty parts. It
// sizes the result first: parsing a large matrix calls it twice per row.
func splitList(s string, seps string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}
	}
	n := 1
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(seps, s[i]) >= 0 {
			n++
		}
	}
	out := make([]string, 0, n)
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || strings.IndexByte(seps, s[i]) >= 0 {
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	return out
}

func splitSkills(s string) []string { return splitList(s, ",") }

func splitAgents(s string) []string { return splitList(s, ", \t") }
