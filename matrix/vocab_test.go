package matrix

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestValidID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"3fa9c1", true}, {"260120204151", true}, {"TASK-12", true}, {"bd-a1b2", true},
		{"ISSUE_003", true}, {"7", true}, {"x", true}, {strings.Repeat("a", 32), true},
		{"", false}, {"-", false}, {"-abc", false}, {"_abc", false}, {"a b", false}, {"x|y", false},
		{strings.Repeat("a", 33), false}, {"#12345", false}, {"café", false}, {"a.b", false}, {"a/b", false},
	} {
		if got := ValidID(c.id); got != c.want {
			t.Errorf("ValidID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}

func TestDefaultVocabularyAliases(t *testing.T) {
	v := DefaultVocabulary()
	for _, c := range []struct{ col, in, want string }{
		{ColDiff, "medium", "med"}, {ColDiff, "M", "med"}, {ColDiff, "trivial", "easy"}, {ColDiff, "S", "easy"},
		{ColDiff, "L", "hard"}, {ColDiff, "XL", "hard"}, {ColDiff, "Hard", "hard"}, {ColDiff, " med ", "med"},
		{ColStatus, "in progress", "IN_PROGRESS"}, {ColStatus, "In-Progress", "IN_PROGRESS"}, {ColStatus, "WIP", "IN_PROGRESS"},
		{ColStatus, "doing", "IN_PROGRESS"}, {ColStatus, "done", "DONE"}, {ColStatus, "Completed", "DONE"},
		{ColStatus, "in review", "REVIEW"}, {ColStatus, "todo", "TODO"}, {ColStatus, "To Do", "TODO"},
		{ColPri, "p1", "P1"}, {ColPri, "1", "P1"}, {ColPri, "P0", "P1"}, {ColPri, "4", "P4"}, {ColPri, "urgent", "P1"},
	} {
		got, err := v.Normalize(c.col, c.in)
		if err != nil || got != c.want {
			t.Errorf("Normalize(%s, %q) = %q, %v; want %q", c.col, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ col, in, mention string }{
		{ColDiff, "extreme", "valid: easy, med, hard"}, {ColStatus, "PAUSED", "valid: TODO, IN_PROGRESS, BLOCKED, REVIEW, DONE"},
		{ColPri, "P5", "valid: P1, P2, P3, P4"}, {ColStatus, "", "valid: TODO"},
	} {
		_, err := v.Normalize(c.col, c.in)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Normalize(%s, %q) = %v; want ErrInvalid mentioning %q", c.col, c.in, err, c.mention)
		}
	}
}

func TestUpdateAcceptsAliasesAndWritesCanonical(t *testing.T) {
	const src = "| ID | Status | Pri | Diff | Description |\n|---|---|---|---|---|\n| 260120204151 | TODO | P2 | M | An M from an older file |\n"
	s := writeMatrix(t, src)
	// The row reads fine: M is an alias of med.
	d, _ := s.Load(context.Background())
	if len(d.Diagnostics()) != 0 {
		t.Fatalf("diagnostics: %+v", d.Diagnostics())
	}
	_, after, err := updateVia(s, context.Background(), "260120204151", Update{Difficulty: Str("XL"), Priority: Str("1"), Status: Str("in progress")}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	want := "| ID | Status | Pri | Diff | Description |\n|---|---|---|---|---|\n| 260120204151 | IN_PROGRESS | P1 | hard | An M from an older file |\n"
	if got, _ := os.ReadFile(s.Path); string(got) != want || after.Difficulty != "hard" {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCanonicalizeAliases(t *testing.T) {
	const src = "# M\n\n| ID | Status | Pri | Diff | Description |\n|---|---|---|---|---|\n" +
		"| a1 |  wip  | 1 | M | keep  spacing |\n" +
		"| a2 | TODO | P2 | med | already canonical |\n" +
		"| a3 | done | - | medium | dash stays |\n" +
		"| a4 | PAUSED | P9 | huge | unknown values stay |\n"
	d := Parse([]byte(src))
	n := d.CanonicalizeAliases()
	want := "# M\n\n| ID | Status | Pri | Diff | Description |\n|---|---|---|---|---|\n" +
		"| a1 |  IN_PROGRESS  | P1 | med | keep  spacing |\n" +
		"| a2 | TODO | P2 | med | already canonical |\n" +
		"| a3 | DONE | - | med | dash stays |\n" +
		"| a4 | PAUSED | P9 | huge | unknown values stay |\n"
	if string(d.Bytes()) != want || n != 5 {
		t.Errorf("changed %d cells:\n%s\nwant 5:\n%s", n, d.Bytes(), want)
	}
	if d.CanonicalizeAliases() != 0 {
		t.Error("a second pass changed something")
	}
}

func TestDateForms(t *testing.T) {
	for _, c := range []struct {
		v      string
		layout string
	}{
		{"2026-01-23", dateLayout}, {"2026-01-23 14:18", layoutDateMinute}, {"2026-01-23 14:18:12", layoutDateSecond},
		{"2026-01-23T14:18", layoutDateTMinute}, {"2026-01-23T14:18:12", layoutDateTSecond},
		{"2026-01-23T14:18:12Z", time.RFC3339}, {"2026-01-23T14:18:12+02:00", time.RFC3339},
		{"260123", layoutCompactDate}, {"240229", layoutCompactDate},
		{"260229", ""}, {"261301", ""}, {"2026-02-30", ""}, {"2026-01-23 25:00", ""}, {"2026-01-23 14:61", ""},
		{"2026-01-23  14:18", ""}, {"2026/01/23", ""}, {"yesterday", ""}, {"26-1-1", ""}, {"abcdef", ""},
	} {
		got, ok := dateLayoutOf(c.v)
		if got != c.layout || ok != (c.layout != "") {
			t.Errorf("dateLayoutOf(%q) = %q, %v; want %q", c.v, got, ok, c.layout)
		}
	}
	d := Parse([]byte("| ID | Status | Created | Updated |\n|---|---|---|---|\n| a1 | TODO | 2026-01-23 14:18:12 | 260123 |\n| a2 | TODO | 2026/01/23 | - |\n"))
	diags := d.Diagnostics()
	if len(diags) != 1 || diags[0].Line != 4 || !strings.Contains(diags[0].Message, "write YYYY-MM-DD, YYYY-MM-DD HH:MM, YYYY-MM-DD HH:MM:SS (or T for the space), or YYMMDD") {
		t.Errorf("diagnostics = %+v", diags)
	}
}

func TestUpdatedKeepsItsStyle(t *testing.T) {
	now := time.Date(2026, 7, 1, 9, 5, 7, 0, time.Local)
	const head = "| ID | Status | Description | Created | Updated |\n|---|---|---|---|---|\n"
	for _, c := range []struct{ cell, want string }{
		{"2026-01-23 14:18:12", "2026-07-01 09:05:07"},
		{"2026-01-23 14:18", "2026-07-01 09:05"},
		{"2026-01-23T14:18", "2026-07-01T09:05"},
		{"260123", "260701"},
		{"2026-01-23", "2026-07-01"},
		{"-", "2026-07-01"},
		{"", "2026-07-01"},
	} {
		row := "| 260120204151 | TODO | Keep the style | 2026-01-20 | " + c.cell + " |\n"
		if c.cell == "" {
			row = "| 260120204151 | TODO | Keep the style | 2026-01-20 | |\n"
		}
		s := writeMatrix(t, head+row)
		if _, _, err := updateVia(s, context.Background(), "260120204151", Update{Status: Str("DONE")}, now); err != nil {
			t.Fatalf("%q: %v", c.cell, err)
		}
		want := head + "| 260120204151 | DONE | Keep the style | 2026-01-20 | " + c.want + " |\n"
		if got, _ := os.ReadFile(s.Path); string(got) != want {
			t.Errorf("Updated %q: got\n%s\nwant\n%s", c.cell, got, want)
		}
	}
}

const dashMatrix = "| ID | Status | Pri | Diff | Mode | Skills | Agents | Research | Description |\n" +
	"|---|---|---|---|---|---|---|---|---|\n" +
	"| t1 | TODO | - | — | - | - | - | - | Dashes everywhere |\n" +
	"| t2 | TODO | P2 | med | coder | go | @ann | notes.md | Values |\n"

func TestDashReadsAsEmpty(t *testing.T) {
	d := Parse([]byte(dashMatrix))
	if diags := d.Diagnostics(); len(diags) != 0 {
		t.Errorf("a dash is not an error: %+v", diags)
	}
	tk, _ := d.Task("t1")
	if tk.Priority != "" || tk.Difficulty != "" || tk.Mode != "" || len(tk.Skills) != 0 || len(tk.Agents) != 0 || tk.Extra["Research"] != "" {
		t.Errorf("t1 = %+v", tk)
	}
	if got := (Query{Agent: "@-"}).Apply(d.Tasks()); len(got) != 0 {
		t.Errorf("a dash is an agent: %+v", got)
	}
	if got := (Query{Priority: []string{"P2"}}).Select([]byte(dashMatrix)); len(got) != 1 || got[0].ID != "t2" {
		t.Errorf("Select P2 = %+v", got)
	}
}

func TestWritingIntoADashCell(t *testing.T) {
	s := writeMatrix(t, dashMatrix)
	_, after, err := updateVia(s, context.Background(), "t1", Update{
		AddAgents: []string{"bob"}, Skills: &[]string{"go"}, Difficulty: Str("hard"),
		Set: map[string]string{"Research": "r.md"},
	}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(dashMatrix, "| t1 | TODO | - | — | - | - | - | - | Dashes everywhere |", "| t1 | TODO | - | hard | - | go | @bob | r.md | Dashes everywhere |", 1)
	if got, _ := os.ReadFile(s.Path); string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Join(after.Agents, " ") != "@bob" {
		t.Errorf("agents = %v", after.Agents)
	}
}

func TestNewIDFollowsTheFile(t *testing.T) {
	now := time.Date(2026, 1, 20, 20, 41, 51, 0, time.UTC)
	head := "| ID | Status | Description |\n|---|---|---|\n"
	rows := func(ids ...string) string {
		var b strings.Builder
		b.WriteString(head)
		for _, id := range ids {
			b.WriteString("| " + id + " | TODO | x |\n")
		}
		return b.String()
	}
	defer fakeRandIDs(t, "abc123")()
	for _, c := range []struct {
		name string
		src  string
		want string
	}{
		{"timestamps", rows("260116093000", "260118101010", "3fa9c1"), "260120204151"},
		{"timestamp clash takes the next free second", rows("260120204151", "260120204152", "260116093000"), "260120204153"},
		{"prefix and number", rows("TASK-9", "TASK-12", "TASK-3", "bd-a1b2"), "TASK-13"},
		{"zero padding kept", rows("ISSUE_001", "ISSUE_007", "ISSUE_003"), "ISSUE_008"},
		{"short prefix", rows("T-7", "T-1"), "T-8"},
		{"numbers grow past the padding", rows("T-09", "T-99"), "T-100"},
		{"hex by default", rows("3fa9c1", "0b12ef", "bead01"), "abc123"},
		{"mixed: no majority", rows("TASK-1", "260116093000", "3fa9c1", "bd-a1b2"), "abc123"},
		{"empty table", head, "abc123"},
	} {
		d := Parse([]byte(c.src))
		got, err := d.NewID(now, nil, nil)
		if err != nil || got != c.want {
			t.Errorf("%s: NewID = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	// taken (task folders) counts as used.
	d := Parse([]byte(rows("TASK-1", "TASK-2")))
	if got, _ := d.NewID(now, func(id string) bool { return id == "TASK-3" }, nil); got != "TASK-4" {
		t.Errorf("with TASK-3 taken by a folder: %q", got)
	}
}

// fakeRandIDs makes randRead return the given 3-byte hex IDs over and over.
func fakeRandIDs(t *testing.T, id string) func() {
	t.Helper()
	old := randRead
	randRead = func(b []byte) (int, error) {
		for i := 0; i < 3; i++ {
			var v byte
			for _, c := range id[2*i : 2*i+2] {
				v = v*16 + byte(strings.IndexRune("0123456789abcdef", c))
			}
			b[i] = v
		}
		return 3, nil
	}
	return func() { randRead = old }
}

func TestCreateWithTimestampIDs(t *testing.T) {
	const src = "| ID | Status | Pri | Diff | Description | Created | Updated |\n|---|---|---|---|---|---|---|\n" +
		"| 260116093000 | TODO | P2 | med | one | 2026-01-16 | 2026-01-16 |\n" +
		"| 260120204151 | DONE | P2 | med | two | 2026-01-20 | 2026-01-20 |\n"
	s := writeMatrix(t, src)
	now := time.Date(2026, 1, 20, 20, 41, 51, 0, time.UTC)
	created, err := createVia(s, context.Background(), Task{Description: "three"}, now)
	if err != nil || created.ID != "260120204152" {
		t.Fatalf("created %+v, %v", created, err)
	}
	want := src + "| 260120204152 | TODO | P2 | med | three | 2026-01-20 | 2026-01-20 |\n"
	if got, _ := os.ReadFile(s.Path); string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTaskFolderID(t *testing.T) {
	rows := map[string]bool{"ISSUE": true, "ISSUE_003": true, "260120204151": true, "3fa9c1": true}
	has := func(id string) bool { return rows[id] }
	for _, c := range []struct {
		name, id string
		known    bool
	}{
		{"ISSUE_003_login", "ISSUE_003", true},
		{"ISSUE_other", "ISSUE", true},
		{"260120204151_fix_the_parser", "260120204151", true},
		{"3fa9c1_x", "3fa9c1", true},
		{"260116_bug_fixes", "260116", false}, // no row: the caller decides (a date, say)
		{"abc123_orphan", "abc123", false},
		{"README.md", "", false},
		{"_hidden", "", false},
		{"-x_y", "", false},
	} {
		id, known := TaskFolderID(c.name, has)
		if id != c.id || known != c.known {
			t.Errorf("TaskFolderID(%q) = %q, %v; want %q, %v", c.name, id, known, c.id, c.known)
		}
	}
}

// Every default alias is documented in docs/matrix-format.md, on its column's line.
func TestDefaultAliasesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/matrix-format.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(string(doc), "\n") {
		for _, col := range []string{ColStatus, ColPri, ColDiff} {
			if strings.HasPrefix(l, "| "+col+" | ") && strings.Contains(l, "→") {
				lines[col] = strings.ToLower(l)
			}
		}
	}
	for col, aliases := range DefaultAliases {
		for alias := range aliases {
			if col == ColPri && len(alias) == 1 && alias[0] >= '1' && alias[0] <= '4' {
				continue // documented as the range `1`–`4`
			}
			if !strings.Contains(lines[col], "`"+alias+"`") {
				t.Errorf("%s alias %q is not in the docs' alias table", col, alias)
			}
		}
	}
}
