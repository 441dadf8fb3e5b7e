package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/golden"
)

var migrateNow = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)

const legacyFixture = "testdata/legacy/old_items.md"

// countingRand makes the ID generator yield 100001, 100002, ... (as hex
// bytes), so that a migrated file is the same on every run.
func countingRand(t *testing.T) {
	t.Helper()
	old := randRead
	n := 0x100000
	randRead = func(b []byte) (int, error) {
		n++
		b[0], b[1], b[2] = byte(n>>16), byte(n>>8), byte(n)
		return len(b), nil
	}
	t.Cleanup(func() { randRead = old })
}

// oldItemRow is an item row of the fixture as a test oracle reads it: split
// at unescaped pipes, by hand, independently of the parser.
type oldItemRow struct {
	line                                      int
	section                                   string
	item, priority, difficulty, backlog, desc string
}

// readOldItems returns the item rows of an older-format file — the `|` lines
// of each table whose header starts with "| Item", outside code fences — and
// the numbers of all the lines of those tables.
func readOldItems(t *testing.T, src string) (rows []oldItemRow, tableLines map[int]bool) {
	t.Helper()
	tableLines = map[int]bool{}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	fence, section := false, ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```"):
			fence = !fence
		case fence:
		case strings.HasPrefix(l, "## "):
			section = l[3:]
		case strings.HasPrefix(l, "| Item |"):
			tableLines[i+1], tableLines[i+2] = true, true
			for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				tableLines[i+1] = true
				c := splitUnescaped(lines[i])
				for len(c) < 5 {
					c = append(c, "")
				}
				rows = append(rows, oldItemRow{line: i + 1, section: section, item: c[0], priority: c[1], difficulty: c[2], backlog: c[3], desc: c[4]})
			}
		}
	}
	return rows, tableLines
}

func splitUnescaped(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

var doneRe = regexp.MustCompile(`✅|✔|\[x\]|^~~|~~$|^DONE\b|^done$|^x$`)

// oracleStatus says what a person reads in the row: done when the Item or
// the Backlog carries a done mark.
func (r oldItemRow) oracleStatus() string {
	for _, c := range []string{r.item, r.backlog} {
		if doneRe.MatchString(c) {
			return "DONE"
		}
	}
	return "TODO"
}

func (r oldItemRow) oracleDifficulty() string {
	switch strings.Trim(r.difficulty, "`") {
	case "S", "easy":
		return "easy"
	case "M", "medium":
		return "med"
	case "L", "XL":
		return "hard"
	}
	return ""
}

func (r oldItemRow) oraclePriority() string {
	switch {
	case strings.HasPrefix(r.section, "P1"):
		return "P1"
	case strings.HasPrefix(r.section, "High"):
		return "P2"
	case strings.HasPrefix(r.section, "P3"):
		return "P3"
	case strings.HasPrefix(r.section, "Low"):
		return "P4"
	}
	return ""
}

func TestMigrateOldItemsFile(t *testing.T) {
	countingRand(t)
	src, err := os.ReadFile(legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := readOldItems(t, string(src))
	if len(old) != 154 {
		t.Fatalf("the fixture has %d item rows; it was written with 154", len(old))
	}
	d := Parse(bytes.Clone(src))
	m, err := d.Migrate(migrateNow)
	if err != nil {
		t.Fatal(err)
	}
	out := string(d.Bytes())
	checkLegacyGolden(t, "old_items.migrated.md", d.Bytes())

	if m.Migrated != 154 || len(m.IDs) != 154 || m.Done+m.Todo != 154 || m.TableLine != 30 || len(m.ItemTables) != 5 {
		t.Fatalf("migration = %+v; want 154 items from 5 tables, table at line 30", m)
	}
	if fmt.Sprint(m.KeptColumns) != "[Backlog]" || m.NoPriority != 8 {
		t.Errorf("kept columns %v, no priority %d; want [Backlog] (some cells hold notes) and the 8 Ideas", m.KeptColumns, m.NoPriority)
	}
	for _, dg := range Parse([]byte(out)).Diagnostics() {
		t.Errorf("the migrated file has a problem: %s", dg)
	}
	tasks := d.Tasks()
	if len(tasks) != 154 {
		t.Fatalf("the migrated file has %d tasks, want 154", len(tasks))
	}
	seen := map[string]bool{}
	done := 0
	for i, task := range tasks {
		o := old[i]
		if task.ID != m.IDs[i] || !ValidID(task.ID) || seen[task.ID] {
			t.Errorf("task %d: ID %q (reported %q) is not a fresh unique ID", i, task.ID, m.IDs[i])
		}
		seen[task.ID] = true
		if task.Status != o.oracleStatus() {
			t.Errorf("line %d %q / backlog %q: status %s, want %s", o.line, o.item, o.backlog, task.Status, o.oracleStatus())
		}
		if task.Status == "DONE" {
			done++
		}
		if task.Priority != o.oraclePriority() {
			t.Errorf("line %d (section %q, cell %q): priority %q, want %q", o.line, o.section, o.priority, task.Priority, o.oraclePriority())
		}
		if task.Difficulty != o.oracleDifficulty() {
			t.Errorf("line %d difficulty cell %q: %q, want %q", o.line, o.difficulty, task.Difficulty, o.oracleDifficulty())
		}
		if task.Created != "2026-11-23" || task.Updated != "2026-11-23" || task.Mode != "" {
			t.Errorf("task %s: created %q updated %q mode %q", task.ID, task.Created, task.Updated, task.Mode)
		}
		// No word lost: the whole Description cell ends the new description,
		// and every word of the Item that is not a done marker is in it, in order.
		if !strings.HasSuffix(task.Description, unescapeCell(o.desc)) {
			t.Errorf("line %d: description %q does not end with the old Description %q", o.line, task.Description, o.desc)
		}
		rest := task.Description
		for _, w := range strings.Fields(strings.Trim(o.item, "~")) {
			if doneRe.MatchString(w) || w == "⬜" || w == "[" || w == "]" || w == "TODO" || w == "DONE:" {
				continue
			}
			i := strings.Index(rest, unescapeCell(w))
			if i < 0 {
				t.Errorf("line %d: word %q of the Item %q is not in the description %q", o.line, w, o.item, task.Description)
				break
			}
			rest = rest[i+len(w):]
		}
		if strings.ContainsAny(task.Description, "✅✔⬜") || strings.Contains(task.Description, "~~") || strings.Contains(task.Description, "[x]") {
			t.Errorf("line %d: description %q still holds a marker", o.line, task.Description)
		}
		// The Backlog cell is kept as it was.
		if task.Extra["Backlog"] != unescapeCell(o.backlog) {
			t.Errorf("line %d: Backlog %q, want %q", o.line, task.Extra["Backlog"], o.backlog)
		}
	}
	if done != m.Done {
		t.Errorf("Migration.Done = %d, tasks say %d", m.Done, done)
	}

	// Sample rows, exactly as written.
	for _, want := range []string{
		"| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Backlog |\n|----|--------|-----|------|------|--------|--------|-------------|---------|---------|---------|\n",
		"| 100001 | DONE | P1 | easy |  |  |  | Fix login redirect loop — Users bounce between /login and /home after the OAuth callback... | 2026-11-23 | 2026-11-23 | ✅ |\n",
		"| 100002 | DONE | P1 | med |  |  |  | Drop legacy API — done in #212 | 2026-11-23 | 2026-11-23 |  |\n",
		"| 100020 | TODO | P2 | hard |  |  |  | Escape the `a \\| b` filter syntax in search — Users type `status:open \\| closed`; the parser splits on the pipe. See [#301](https://github.com/example/app/issues/301). | 2026-11-23 | 2026-11-23 | sprint 4 |\n",
		"| 10004d | TODO | P3 | hard |  |  |  | Add retry to the fetcher — Use `backoff.Retry` with jitter; cap at 5 tries. | 2026-11-23 | 2026-11-23 | [ ] |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the migrated file lacks the line\n%s", want)
		}
	}
	if task, _ := d.Task("100020"); task.Description != "Escape the `a | b` filter syntax in search — Users type `status:open | closed`; the parser splits on the pipe. See [#301](https://github.com/example/app/issues/301)." {
		t.Errorf("the escaped pipes do not read back: %q", task.Description)
	}

	// Everything that is not an item table is kept, byte for byte and in order.
	kept := nonItemLines(t, string(src))
	rest := out
	for _, l := range kept {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("the migrated file lost (or reordered) the line %q", l)
		}
		rest = rest[i+len(l):]
	}
	for _, legend := range []string{
		"| Size | Meaning |\n|------|---------|\n| S | under an hour |\n| M | half a day |\n| L | a day or two |\n| XL | a week+ |\n",
		"```markdown\n| Item | Priority | Difficulty | Backlog | Description |\n|------|----------|-----------|---------|-------------|\n| Example row in a code block, not an item | P3 | S | | ignore me |\n```\n",
	} {
		if !strings.Contains(out, legend) {
			t.Errorf("the migrated file lacks the block\n%s", legend)
		}
	}
	if n := strings.Count(out, "| Item |"); n != 1 {
		t.Errorf("the migrated file has %d Item headers; want only the one in the code block", n)
	}
	if strings.Contains(out, "\n\n\n") {
		t.Errorf("removing the tables left a run of blank lines")
	}
}

// nonItemLines returns the non-blank lines of src that are not in an item table.
func nonItemLines(t *testing.T, src string) []string {
	t.Helper()
	_, inTable := readOldItems(t, src)
	var out []string
	for i, l := range strings.Split(src, "\n") {
		if strings.TrimSpace(l) != "" && !inTable[i+1] {
			out = append(out, l+"\n")
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d lines of prose, headings and legends: the oracle is broken", len(out))
	}
	return out
}

func checkLegacyGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "legacy", name), string(got))
}

func TestMigrateSmallFiles(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
		m               string // fmt of selected Migration fields
	}{
		{
			name: "CRLF, no outer pipes, a Status column and free-text notes",
			src: "# Plan\r\n\r\n" +
				"## Critical\r\n\r\n" +
				"Item | Status | Size | Notes\r\n---|---|---|---\r\n" +
				"Ship it | in progress | small | ask Bo\r\n" +
				"~~Old thing~~ | waiting on legal | L |\r\n\r\n" +
				"## Someday\r\n\r\n" +
				"| Item | Priority | Difficulty |\r\n|-|-|-|\r\n| Paint the shed | low | hard |\r\n\r\ntail\r\n",
			want: "# Plan\r\n\r\n## Critical\r\n\r\n" +
				"| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Status (old) | Notes |\r\n" +
				"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|--------------|-------|\r\n" +
				"| 100001 | IN_PROGRESS | P1 | easy |  |  |  | Ship it | 2026-11-23 | 2026-11-23 | in progress | ask Bo |\r\n" +
				"| 100002 | DONE | P1 | hard |  |  |  | Old thing | 2026-11-23 | 2026-11-23 | waiting on legal |  |\r\n" +
				"| 100003 | TODO | P4 | hard |  |  |  | Paint the shed | 2026-11-23 | 2026-11-23 |  |  |\r\n\r\n" +
				"## Someday\r\n\r\ntail\r\n",
			m: "3 [Status (old) Notes] 0",
		},
		{
			name: "a second column of one kind (Details after Description) is kept whole",
			src:  "| Priority | Item | Description | Details |\n|---|---|---|---|\n| P2 | Ship | short | long text |\n",
			want: "| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Details |\n" +
				"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|---------|\n" +
				"| 100001 | TODO | P2 |  |  |  |  | Ship — short | 2026-11-23 | 2026-11-23 | long text |\n",
			m: "1 [Details] 0",
		},
		{
			name: "items under a Done heading are done",
			src:  "## ✅ Completed (P2)\n\n| Item | Difficulty |\n|---|---|\n| Old work | S |\n\n## Next\n\n| Item | Difficulty |\n|---|---|\n| New work | M |\n",
			want: "## ✅ Completed (P2)\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
				"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
				"| 100001 | DONE | P2 | easy |  |  |  | Old work | 2026-11-23 | 2026-11-23 |\n" +
				"| 100002 | TODO |  | med |  |  |  | New work | 2026-11-23 | 2026-11-23 |\n\n## Next\n\n",
			m: "2 [] 1",
		},
		{
			name: "legend by words and by time, P0 heading, no final newline",
			src: "| Effort | Means |\n|---|---|\n| A | a few hours |\n| B | 4-6 hours |\n| C | quick fix |\n| D | 1 or 2 days |\n\n" +
				"### P0 fires\n| Item | Difficulty | Backlog |\n|---|---|---|\n| one | A | [x] |\n| two | B | ⬜ |\n| three | C | |\n| four | D | ✔️ |",
			want: "| Effort | Means |\n|---|---|\n| A | a few hours |\n| B | 4-6 hours |\n| C | quick fix |\n| D | 1 or 2 days |\n\n" +
				"### P0 fires\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
				"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
				"| 100001 | DONE | P1 | easy |  |  |  | one | 2026-11-23 | 2026-11-23 |\n" +
				"| 100002 | TODO | P1 | med |  |  |  | two | 2026-11-23 | 2026-11-23 |\n" +
				"| 100003 | TODO | P1 | easy |  |  |  | three | 2026-11-23 | 2026-11-23 |\n" +
				"| 100004 | DONE | P1 | hard |  |  |  | four | 2026-11-23 | 2026-11-23 |",
			m: "4 [] 0",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			countingRand(t)
			d := Parse([]byte(c.src))
			m, err := d.Migrate(migrateNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.want {
				t.Errorf("migrated file:\n%q\nwant\n%q", got, c.want)
			}
			if got := fmt.Sprint(m.Migrated, " ", m.KeptColumns, " ", m.NoPriority); got != c.m {
				t.Errorf("migration %+v; want %s", m, c.m)
			}
			for _, dg := range d.Diagnostics() {
				t.Errorf("migrated file: %s", dg)
			}
		})
	}
}

func TestMigrateRefusesAndChangesNothing(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"a task table already", "| ID | Status | Description |\n|---|---|---|\n| a1b2c3 | TODO | x |\n\n| Item | Priority |\n|---|---|\n| y | P1 |\n",
			"has a task table (line 1) and also 1 older-format Item table (line 5)"},
		{"no Item table", "# Notes\n\n| Size | Meaning |\n|---|---|\n| S | small |\n", "migrate cannot convert this file"},
		{"empty file", "", "migrate cannot convert this file"},
		{"values it cannot map and a split row", "| Item | Priority | Difficulty | Description |\n|---|---|---|---|\n| a | P1 | ZZ | x |\n| b | soonish | S | y |\n| c | P2 | S | a | b |\n",
			"cannot read 3 item value(s), so nothing was written: line 3: difficulty \"ZZ\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Parse([]byte(c.src))
			_, err := d.Migrate(migrateNow)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Migrate = %v; want ErrRefused saying %q", err, c.want)
			}
			if string(d.Bytes()) != c.src {
				t.Errorf("a refused migration changed the document")
			}
		})
	}
	_, err := Parse([]byte("| Item | Priority | Difficulty | Description |\n|---|---|---|---|\n| b | soonish | S | y |\n| c | P2 | S | a | b |\n")).Migrate(migrateNow)
	for _, want := range []string{`line 3: priority "soonish"`, "line 4 has 5 cells but its header has 4", `write a | inside a cell as \|`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v lacks %q", err, want)
		}
	}
}

func TestStoreMigrate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "DEVELOPMENT_MATRIX.md")
	// A refusal leaves the folder as it was: not even a lock file.
	bad := "| Item | Priority |\n|---|---|\n| a | soonish |\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := migrateVia(NewStore(path), context.Background(), migrateNow); !errors.Is(err, ErrRefused) {
		t.Fatalf("Migrate of an unreadable priority = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused migrate left %d entries in the folder", len(entries))
	}
	src := "## P2\n\n| Item | Priority | Difficulty | Backlog | Description |\n|---|---|---|---|---|\n| a | | S | ✅ | first |\n| b | | M | | second |\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewStore(path)
	m, err := migrateVia(s, context.Background(), migrateNow)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ids := d.IDs(); len(ids) != 2 || ids[0] != m.IDs[0] || ids[1] != m.IDs[1] || m.Done != 1 || m.Todo != 1 {
		t.Fatalf("after the migration the file has IDs %v; migration %+v", ids, m)
	}
	if a, _ := d.Task(m.IDs[0]); a.Status != "DONE" || a.Priority != "P2" || a.Difficulty != "easy" || a.Description != "a — first" {
		t.Errorf("first task %+v", a)
	}
	written, _ := os.ReadFile(path)
	// Migrating a migrated file is not an error (issue 19): nothing to do.
	if m, err := migrateVia(s, context.Background(), migrateNow); err != nil || !m.AlreadyMigrated || m.Migrated != 0 {
		t.Fatalf("second migrate = %+v, %v; want nothing to migrate", m, err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, written) {
		t.Errorf("a second migrate changed the file")
	}
}

func TestFreshIDSkipsIDsItGaveOut(t *testing.T) {
	old := randRead
	t.Cleanup(func() { randRead = old })
	seq := []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xbb, 0xbb, 0xbb}
	randRead = func(b []byte) (int, error) {
		copy(b, seq[:3])
		seq = seq[3:]
		return 3, nil
	}
	d := Parse(nil)
	used := map[string]bool{}
	a, err1 := d.freshID(time.Time{}, used)
	b, err2 := d.freshID(time.Time{}, used)
	if err1 != nil || err2 != nil || a != "aaaaaa" || b != "bbbbbb" {
		t.Fatalf("freshID gave %q, %q (%v, %v); want aaaaaa then bbbbbb, skipping the repeat", a, b, err1, err2)
	}
}

func TestRequireTaskTable(t *testing.T) {
	src, err := os.ReadFile(legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	err = Parse(src).RequireTaskTable()
	var nt *NoTaskTableError
	if !errors.As(err, &nt) || nt.Items != 154 || nt.ItemTables != 5 || !errors.Is(err, ErrNoTaskTable) || !errors.Is(err, ErrRefused) {
		t.Fatalf("RequireTaskTable = %#v; want 154 items in 5 tables, matching ErrNoTaskTable and ErrRefused", err)
	}
	for _, want := range []string{"no task table (a table whose header has ID and Status columns)", "older format, 154 items in 5", "`agentinfra migrate --dry-run`", "then `agentinfra migrate`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	err = Parse([]byte("# Just prose\n\n| Size | Meaning |\n|---|---|\n| S | small |\n")).RequireTaskTable()
	if !errors.As(err, &nt) || nt.Items != 0 || !strings.Contains(err.Error(), "\n"+strings.TrimSuffix(CanonicalHeader, "\n")) || strings.Contains(err.Error(), "migrate") {
		t.Errorf("without Item tables: %v; want the header to add, no migrate advice", err)
	}
	if err := Parse([]byte(CanonicalHeader)).RequireTaskTable(); err != nil {
		t.Errorf("an empty task table: %v", err)
	}
	// An ID looked up in such a file is not found, and the message says why.
	if _, err := Parse(src).Lookup("a1b2c3"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "older format, 154 items") {
		t.Errorf("Lookup on an older-format file = %v", err)
	}
	// create says the same, and writes nothing.
	d := Parse(src)
	if _, err := d.CreateTask(Task{Description: "x"}, migrateNow); !errors.As(err, &nt) || nt.Items != 154 {
		t.Errorf("CreateTask on an older-format file = %v", err)
	}
	if !bytes.Equal(d.Bytes(), src) {
		t.Errorf("a refused create changed the document")
	}
}

func TestLegacyValueRules(t *testing.T) {
	sizes := map[string]string{"s": "under an hour", "m": "half a day", "l": "a day or two", "xl": "a week+", "q": "quick fix, minutes", "w": "2-3 hours", "x": "4-6 hrs", "z": "about a month"}
	for raw, want := range map[string]string{
		"S": "easy", "M": "med", "L": "hard", "XL": "hard", "`M`": "med", "**L**": "hard", "Q": "easy", "W": "easy", "X": "med", "Z": "hard",
		"easy": "easy", "Medium": "med", "HARD": "hard", "-": "", "": "", "?": "", "trivial": "easy", "complex": "hard",
	} {
		if got, ok := legacyDifficulty(raw, sizes); !ok || got != want {
			t.Errorf("difficulty %q with the legend = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for raw, want := range map[string]string{"S": "easy", "XS": "easy", "M": "med", "L": "hard", "XL": "hard", "XXL": "hard"} {
		if got, ok := legacyDifficulty(raw, nil); !ok || got != want {
			t.Errorf("difficulty %q without a legend = %q, %v; want %q", raw, got, ok, want)
		}
	}
	if got, ok := legacyDifficulty("ZZ", sizes); ok {
		t.Errorf("difficulty ZZ = %q; want it refused", got)
	}
	// A legend that says M is big wins over the size code.
	if got, _ := legacyDifficulty("M", map[string]string{"m": "multi-week, complex"}); got != "hard" {
		t.Errorf("M by a legend saying complex = %q", got)
	}
	priLegend := map[string]string{"hot": "P1: drop everything", "warm": "this sprint (high)"}
	for _, c := range []struct{ cell, heading, want string }{
		{"P1", "", "P1"}, {"p3", "P1", "P3"}, {"2", "", "P2"}, {"P0", "", "P1"}, {"", "P1 — Critical", "P1"},
		{"", "🔥 Critical", "P1"}, {"", "High priority", "P2"}, {"", "Medium", "P3"}, {"", "Low / nice to have", "P4"},
		{"", "Ideas", ""}, {"-", "P0: outages", "P1"}, {"Low", "P1", "P4"}, {"hot", "", "P1"}, {"warm", "", "P2"},
		{"", "Backlog (P4)", "P4"}, {"**P2**", "", "P2"},
	} {
		if got, ok := legacyPriority(c.cell, c.heading, priLegend); !ok || got != c.want {
			t.Errorf("priority cell %q under %q = %q, %v; want %q", c.cell, c.heading, got, ok, c.want)
		}
	}
	if got, ok := legacyPriority("soonish", "P1", nil); ok {
		t.Errorf("priority soonish = %q; want it refused", got)
	}
	for raw, want := range map[string]struct {
		title string
		state markerState
	}{
		"✅ Fix it": {"Fix it", markedDone}, "Fix it ✅": {"Fix it", markedDone}, "~~Fix it~~": {"Fix it", markedDone},
		"[x] Fix it": {"Fix it", markedDone}, "[ ] Fix it": {"Fix it", markedTodo}, "⬜ Fix it": {"Fix it", markedTodo},
		"DONE: Fix it": {"Fix it", markedDone}, "DONE — Fix it": {"Fix it", markedDone}, "TODO - Fix it": {"Fix it", markedTodo}, "DONE -x": {"-x", markedDone}, "TODO Fix it": {"Fix it", markedTodo}, "✔️ Fix it": {"Fix it", markedDone},
		"Done button styling": {"Done button styling", noMarker}, "Fix ~~old~~ new": {"Fix ~~old~~ new", noMarker},
		"~~a~~ and ~~b~~": {"~~a~~ and ~~b~~", noMarker}, "✅ ~~Fix it~~": {"Fix it", markedDone}, "Xylophone": {"Xylophone", noMarker},
	} {
		if title, state := itemTitle(raw); title != want.title || state != want.state {
			t.Errorf("itemTitle(%q) = %q, %d; want %q, %d", raw, title, state, want.title, want.state)
		}
	}
	for heading, want := range map[string]bool{"Done": true, "✅ Completed": true, "Shipped in 2025": true, "P1 — Critical": false, "Not done yet": false, "Backlog": false, "Open ✅ items": false} {
		if got := sectionSaysDone(heading); got != want {
			t.Errorf("sectionSaysDone(%q) = %v", heading, got)
		}
	}
	for raw, want := range map[string]struct {
		state markerState
		ok    bool
	}{
		"": {noMarker, true}, "✅": {markedDone, true}, "done": {markedDone, true}, "x": {markedDone, true}, "[ ]": {markedTodo, true},
		"TODO": {markedTodo, true}, "✅ DONE": {markedDone, true}, "#212": {noMarker, false}, "✅ #212": {markedDone, false}, "🚧 WIP": {noMarker, false},
	} {
		if state, ok := markerCell(raw); state != want.state || ok != want.ok {
			t.Errorf("markerCell(%q) = %d, %v; want %d, %v", raw, state, ok, want.state, want.ok)
		}
	}
}

// Issue 19: what people write in older matrices, each taken as a person
// reads it.
func TestMigrateWhatPeopleWrite(t *testing.T) {
	countingRand(t)
	taskOf := func(t *testing.T, d *Doc, title string) Task {
		t.Helper()
		for _, tk := range d.Tasks() {
			if strings.HasPrefix(tk.Description, title) {
				return tk
			}
		}
		t.Fatalf("no task %q in\n%s", title, d.Bytes())
		return Task{}
	}
	t.Run("priority from the heading above the nearest", func(t *testing.T) {
		d := Parse([]byte("## P2 — Important\n\n### Feature Enhancements\n\n| Item | Priority | Description |\n|---|---|---|\n| Tag autocomplete | | while typing |\n\n#### Small ones\n\n| Item | Priority | Description |\n|---|---|---|\n| Tooltip | | on hover |\n\n## P3\n\n| Item | Priority | Description |\n|---|---|---|\n| Later | | someday |\n"))
		m, err := d.Migrate(migrateNow)
		if err != nil {
			t.Fatal(err)
		}
		if p := taskOf(t, d, "Tag").Priority; p != "P2" || taskOf(t, d, "Tooltip").Priority != "P2" || taskOf(t, d, "Later").Priority != "P3" || m.NoPriority != 0 {
			t.Errorf("priorities %s %s %s, no priority %d", p, taskOf(t, d, "Tooltip").Priority, taskOf(t, d, "Later").Priority, m.NoPriority)
		}
	})
	t.Run("placeholder rows are no items", func(t *testing.T) {
		d := Parse([]byte("## P1\n\n| Item | Priority | Description |\n|---|---|---|\n| (None currently) | | |\n| None | | - |\n| — | | |\n| _nothing yet_ | | |\n| Real one | | x |\n"))
		m, err := d.Migrate(migrateNow)
		if err != nil || m.Migrated != 1 || fmt.Sprint(m.Placeholders) != "[5 6 7 8]" {
			t.Errorf("migration %+v, %v", m, err)
		}
	})
	t.Run("a summary table's items merge into their rows", func(t *testing.T) {
		d := Parse([]byte("## Quick Reference: P1 Items\n\n| Item | Priority | Description |\n|---|---|---|\n| Fix login | P1 | see below |\n\n## P1\n\n| Item | Priority | Description |\n|---|---|---|\n| ~~Fix login~~ | P1 | users bounce; fixed in #212 |\n| Other | P1 | x |\n"))
		m, err := d.Migrate(migrateNow)
		if err != nil || m.Migrated != 2 || len(m.Merged) != 1 || m.Merged[0] != (MergedItem{Line: 5, Into: 11}) {
			t.Fatalf("migration %+v, %v", m, err)
		}
		if tk := taskOf(t, d, "Fix login"); tk.Status != "DONE" || tk.Description != "Fix login — users bounce; fixed in #212" {
			t.Errorf("merged task %+v", tk)
		}
		if tk, _ := d.Task(d.IDs()[0]); tk.Line != 7 || !strings.HasPrefix(string(d.Bytes()), "## Quick Reference: P1 Items\n\n## P1\n\n| ID |") {
			t.Errorf("the task table is not in the P1 section but at line %d:\n%s", tk.Line, d.Bytes())
		}
	})
	t.Run("the legend's markers count anywhere in the row", func(t *testing.T) {
		d := Parse([]byte("Legend: ✅ = complete · 🚧 = in progress · ⬜ = not started\n\n| Item | Priority | Description |\n|---|---|---|\n| Export | P2 | ✅ shipped in 0.9 |\n| Queue | P2 | 🚧 Dana |\n| Import | P2 | ⬜ |\n"))
		if _, err := d.Migrate(migrateNow); err != nil {
			t.Fatal(err)
		}
		if a, b, c := taskOf(t, d, "Export").Status, taskOf(t, d, "Queue").Status, taskOf(t, d, "Import").Status; a != "DONE" || b != "IN_PROGRESS" || c != "TODO" {
			t.Errorf("statuses %s %s %s", a, b, c)
		}
		// Without a legend a ✅ in the Description says nothing.
		d = Parse([]byte("| Item | Priority | Description |\n|---|---|---|\n| Export | P2 | ✅ shipped in 0.9 |\n"))
		if _, err := d.Migrate(migrateNow); err != nil || taskOf(t, d, "Export").Status != "TODO" {
			t.Errorf("without a legend: %v %+v", err, d.Tasks())
		}
	})
	t.Run("rows below a blank line or with no header", func(t *testing.T) {
		src := "## P1\n\n| Item | Priority | Description |\n|---|---|---|\n\n| Below the blank | | a |\n\n## P3\n\n| No header | | b |\n| Nor this | P2 | c |\n"
		d := Parse([]byte(src))
		m, err := d.Migrate(migrateNow)
		if err != nil || m.Migrated != 3 || m.Headerless != 3 {
			t.Fatalf("migration %+v, %v\n%s", m, err, d.Bytes())
		}
		if a, b, c := taskOf(t, d, "Below").Priority, taskOf(t, d, "No header").Priority, taskOf(t, d, "Nor this").Priority; a != "P1" || b != "P3" || c != "P2" {
			t.Errorf("priorities %s %s %s", a, b, c)
		}
		if strings.Count(string(d.Bytes()), "No header") != 1 || strings.Contains(string(d.Bytes()), "| Item |") {
			t.Errorf("the headerless rows are left in place:\n%s", d.Bytes())
		}
	})
	t.Run("item rows no header gives columns to are refused", func(t *testing.T) {
		src := "## P1\n\n| Item | Priority | Description |\n|---|---|---|\n| One | | a |\n\n## P2\n\n| Two | | b | extra | cells |\n"
		d := Parse([]byte(src))
		_, err := d.Migrate(migrateNow)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "would leave out the item rows on line 9") || string(d.Bytes()) != src {
			t.Errorf("Migrate = %v", err)
		}
	})
}
