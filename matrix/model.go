// Package matrix reads, validates and edits .agent/DEVELOPMENT_MATRIX.md.
//
// The file is a Markdown document owned by people; agentinfra owns only the task
// rows inside its task tables. Parse keeps the original bytes, and every edit is
// spliced into them, so everything that is not a changed row stays byte for byte.
package matrix

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
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

// Errors callers can test with errors.Is: the kinds' sentinels (every
// agenterr.Error of the kind matches), and the lock's (Unavailable).
var (
	ErrNotFound    = agenterr.ErrNotFound
	ErrInvalid     = agenterr.ErrInvalid
	ErrRefused     = agenterr.ErrRefused
	ErrLockTimeout = agenterr.New(agenterr.Unavailable, "timed out waiting for the matrix lock")
	// ErrDuplicateID is an ID on more than one row: no reader or writer
	// picks one of them (a Refused error).
	ErrDuplicateID = agenterr.New(agenterr.Refused, "task ID on more than one row")
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

// MaxIDLen is the longest task ID.
const MaxIDLen = 32

// ValidID reports whether s can be a task ID: 1 to MaxIDLen letters, digits,
// '-' and '_', starting with a letter or digit. That takes in the IDs other
// tools write (6 hex as agentinfra does, 12-digit timestamps, TASK-12,
// bd-a1b2) and keeps IDs usable in folder names and on command lines.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// idRule says what ValidID accepts, for messages.
const idRule = "an ID is 1-32 letters, digits, '-' or '_', starting with a letter or digit, e.g. 3fa9c1, 260120204151 or TASK-12"

// NormalizeStatus accepts a status of the default vocabulary in any case, or
// one of its aliases ("in progress", "WIP", "done", ...).
func NormalizeStatus(s string) (string, error) { return defaultVocabulary.Status(s) }

// NormalizePriority accepts P1..P4 in any case, a bare digit, or an alias.
func NormalizePriority(s string) (string, error) { return defaultVocabulary.Priority(s) }

// NormalizeDifficulty accepts easy, med and hard in any case, or an alias
// (medium, M, trivial, S, L, XL, ...).
func NormalizeDifficulty(s string) (string, error) { return defaultVocabulary.Difficulty(s) }

const dateLayout = "2006-01-02"

// Layouts of Created and Updated values, besides RFC 3339: a date, a date
// with a time (after a space or a 'T'), and the YYMMDD some files use.
const (
	layoutDateMinute  = "2006-01-02 15:04"
	layoutDateSecond  = "2006-01-02 15:04:05"
	layoutDateTMinute = "2006-01-02T15:04"
	layoutDateTSecond = "2006-01-02T15:04:05"
	layoutCompactDate = "060102"
	acceptedDateForms = "YYYY-MM-DD, YYYY-MM-DD HH:MM, YYYY-MM-DD HH:MM:SS (or T for the space), or YYMMDD"
)

// digits returns the number written in s[a:b], or -1 if it is not all digits.
func digits(s string, a, b int) int {
	v := 0
	for i := a; i < b; i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		v = v*10 + int(s[i]-'0')
	}
	return v
}

func realDate(y, m, d int) bool {
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// validDate checks YYYY-MM-DD by hand: time.Parse dominates parsing otherwise.
func validDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	// Every date of a matrix is checked: no calls, no loops.
	d0, d1, d2, d3, d5, d6, d8, d9 := s[0]-'0', s[1]-'0', s[2]-'0', s[3]-'0', s[5]-'0', s[6]-'0', s[8]-'0', s[9]-'0'
	if d0 > 9 || d1 > 9 || d2 > 9 || d3 > 9 || d5 > 9 || d6 > 9 || d8 > 9 || d9 > 9 { // bytes: below '0' wraps
		return false
	}
	return realDate(int(d0)*1000+int(d1)*100+int(d2)*10+int(d3), int(d5)*10+int(d6), int(d8)*10+int(d9))
}

// dateLayoutOf returns the layout s is written in ("" and false when s is no
// date agentinfra reads). Checked by hand for the same reason as validDate.
func dateLayoutOf(s string) (string, bool) {
	switch {
	case len(s) == 6:
		if digits(s, 0, 2) >= 0 && realDate(2000+digits(s, 0, 2), digits(s, 2, 4), digits(s, 4, 6)) {
			return layoutCompactDate, true
		}
		return "", false
	case len(s) < 10 || !validDate(s[:10]):
		return "", false
	case len(s) == 10:
		return dateLayout, true
	}
	sep := s[10]
	if sep != ' ' && sep != 'T' {
		return "", false
	}
	clock := func(t string) bool {
		if len(t) != 5 && len(t) != 8 || t[2] != ':' {
			return false
		}
		h, m := digits(t, 0, 2), digits(t, 3, 5)
		if h < 0 || h > 23 || m < 0 || m > 59 {
			return false
		}
		if len(t) == 8 {
			sec := digits(t, 6, 8)
			return t[5] == ':' && sec >= 0 && sec <= 60
		}
		return true
	}
	if t := s[11:]; clock(t) {
		switch {
		case sep == ' ' && len(t) == 5:
			return layoutDateMinute, true
		case sep == ' ':
			return layoutDateSecond, true
		case len(t) == 5:
			return layoutDateTMinute, true
		default:
			return layoutDateTSecond, true
		}
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return time.RFC3339, true
	}
	return "", false
}

// dateProblem says what is wrong with a Created or Updated value that is no
// date agentinfra reads: a form it reads whose day does not exist (2026-02-30,
// 260230 as YYMMDD) is said so, rather than advising the form it is in.
func dateProblem(s string) string {
	switch {
	case len(s) == 8 && digits(s, 0, 8) >= 0 && validDate(s[:4]+"-"+s[4:6]+"-"+s[6:]):
		return "YYYYMMDD is not read; write it with dashes: " + s[:4] + "-" + s[4:6] + "-" + s[6:]
	case len(s) == 6 && digits(s, 0, 6) >= 0:
		return fmt.Sprintf("not a real day: read as YYMMDD it is 20%s-%s-%s; write the day it is", s[:2], s[2:4], s[4:])
	case len(s) >= 10 && s[4] == '-' && s[7] == '-' && digits(s, 0, 4) >= 0 && digits(s, 5, 7) >= 0 && digits(s, 8, 10) >= 0 && !validDate(s[:10]):
		return "not a real day (" + s[:10] + "); write the day it is, YYYY-MM-DD"
	}
	return "not a date; write " + acceptedDateForms
}

// validDateTime reports whether s is a Created or Updated value agentinfra reads.
func validDateTime(s string) bool {
	_, ok := dateLayoutOf(s)
	return ok
}

// Today formats a time the way Created and Updated are written.
func Today(now time.Time) string { return now.Format(dateLayout) }

// stampLike formats now in the style of the value a cell held: a date and
// time at the same precision, YYMMDD, or (empty or unreadable) a date.
func stampLike(old string, now time.Time) string {
	if l, ok := dateLayoutOf(strings.TrimSpace(old)); ok {
		return now.Format(l)
	}
	return Today(now)
}

// ValidName reports whether a mode or skill slug is usable as a file name.
func ValidName(s string) bool { return isSlug(s) && !strings.Contains(s, "..") }

// isSlug reports whether s is a letter or digit followed by letters, digits,
// '_', '.' or '-' (ASCII). A loop, not a regexp: compiling one is part of
// every command's start-up.
func isSlug(s string) bool {
	if s == "" || !isASCIIAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isASCIIAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// NormalizeMention turns "x" or "@x" into "@x" and checks it.
func NormalizeMention(s string) (string, error) {
	v := strings.TrimSpace(s)
	if !strings.HasPrefix(v, "@") {
		v = "@" + v
	}
	if !isSlug(v[1:]) { // an @ and a slug
		return "", invalid("agent", s, "not an @mention (letters, digits, '-', '_', '.')", nil)
	}
	return v, nil
}

// splitList splits s at separators (',' and, for agents, ' ' and '\t'),
// trimming and dropping empty parts. It sizes the result first: listing a
// large matrix calls it twice per row.
func splitList(s string, agents bool) []string {
	isSep := func(c byte) bool { return c == ',' || agents && (c == ' ' || c == '\t') }
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}
	}
	n := 1
	for i := 0; i < len(s); i++ {
		if isSep(s[i]) {
			n++
		}
	}
	if n == 1 {
		return []string{s} // one skill or agent: the common case
	}
	out := make([]string, 0, n)
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || isSep(s[i]) {
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	return out
}

func splitSkills(s string) []string { return splitList(s, false) }

func splitAgents(s string) []string { return splitList(s, true) }
