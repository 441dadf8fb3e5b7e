package matrix

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/golden"
)

// goldenNow is the clock of every edit golden.
var goldenNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// corpusFiles returns testdata/corpus/*.md; files named invalid_* must have
// errors, every other file must parse clean.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	return files
}

// renderParse is the golden form of a parse: the tasks as JSON, then the
// diagnostics as the CLI prints them.
func renderParse(t testing.TB, name string, d *Doc) []byte {
	t.Helper()
	var b bytes.Buffer
	tasks, err := json.MarshalIndent(d.Tasks(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("# tasks\n")
	b.Write(tasks)
	b.WriteString("\n# diagnostics\n")
	for _, dg := range d.Diagnostics() {
		dg.File = name
		b.WriteString(dg.String() + "\n")
	}
	return b.Bytes()
}

// checkGolden compares got with testdata/golden/name (the golden harness),
// rewriting it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), string(got))
}

func TestCorpusRoundTripAndGoldens(t *testing.T) {
	for _, file := range corpusFiles(t) {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			d := Parse(src)
			if !bytes.Equal(d.Bytes(), src) {
				t.Fatalf("Parse(src).Bytes() is not byte-identical to the file")
			}
			invalid := strings.HasPrefix(name, "invalid_")
			if got := HasErrors(d.Diagnostics()); got != invalid {
				t.Errorf("HasErrors = %v, want %v (files named invalid_* must have errors, others none): %v", got, invalid, d.Diagnostics())
			}
			for _, tk := range d.Tasks() {
				if tk.Skills == nil || tk.Agents == nil {
					t.Errorf("task %q on line %d: Skills/Agents must never be nil", tk.ID, tk.Line)
				}
				line := lineOf(src, tk.Line)
				if tk.ID != "" && !strings.Contains(line, tk.ID) {
					t.Errorf("task %q claims line %d, which is %q", tk.ID, tk.Line, line)
				}
			}
			checkGolden(t, strings.TrimSuffix(name, ".md")+".txt", renderParse(t, name, d))
		})
	}
}

// lineOf returns line n (1-based) of src without its line ending.
func lineOf(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSuffix(lines[n-1], "\r")
}

// splitLines splits src after each '\n', keeping line endings, so that a
// missing final newline and CRLF both show.
func splitLines(src []byte) []string {
	return strings.SplitAfter(string(src), "\n")
}

// assertOneLineChanged checks that after differs from before in line n only.
func assertOneLineChanged(t *testing.T, before, after []byte, n int) {
	t.Helper()
	b, a := splitLines(before), splitLines(after)
	if len(a) != len(b) {
		t.Fatalf("line count changed from %d to %d", len(b), len(a))
	}
	for i := range b {
		if (a[i] != b[i]) != (i == n-1) {
			t.Errorf("line %d: changed=%v, want only line %d changed\nbefore: %q\nafter:  %q", i+1, a[i] != b[i], n, b[i], a[i])
		}
	}
}

// assertOneLineAdded checks that after is before with exactly one line
// inserted as line n (1-based), keeping the file's line ending style.
func assertOneLineAdded(t *testing.T, before, after []byte, n int) {
	t.Helper()
	b := strings.Split(string(before), "\n")
	a := strings.Split(string(after), "\n")
	if len(a) != len(b)+1 {
		t.Fatalf("got %d lines, want %d+1", len(a), len(b))
	}
	i := n - 1
	if strings.Join(a[:i], "\n") != strings.Join(b[:i], "\n") || strings.Join(a[i+1:], "\n") != strings.Join(b[i:], "\n") {
		t.Fatalf("the file changed elsewhere than by inserting line %d %q", n, a[i])
	}
	if i > 0 && strings.HasSuffix(a[i-1], "\r") != strings.HasSuffix(a[i], "\r") && i+1 < len(a) {
		t.Errorf("new line %q does not keep the line ending of its table", a[i])
	}
}

type editGolden struct {
	file   string
	id     string // task to update
	update Update
	check  func(t *testing.T, after Task)
	add    Task
}

var editGoldens = []editGolden{
	{
		file:   "basic.md",
		id:     "0b12ef",
		update: Update{Status: Str("done"), Description: Str("Café — now with a | pipe and a\nnewline"), AddAgents: []string{"zoe", "@bob"}},
		check: func(t *testing.T, after Task) {
			if after.Status != "DONE" || after.Description != "Café — now with a | pipe and a\nnewline" || strings.Join(after.Agents, " ") != "@bob @carol @zoe" || after.Updated != "2026-07-01 12:00" { // the cell had a time: it keeps one
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e0", Description: "Added | by the golden test", Skills: []string{"go-testing"}, Agents: []string{"@alice"}},
	},
	{
		file:   "crlf.md",
		id:     "c0ffef",
		update: Update{Status: Str("REVIEW"), Priority: Str("P1")},
		check: func(t *testing.T, after Task) {
			if after.Status != "REVIEW" || after.Updated != "2026-07-01" {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e1", Priority: "P2", Description: "Goes into the P2 table"},
	},
	{
		file:   "sections.md",
		id:     "200001",
		update: Update{Status: Str("IN_PROGRESS"), Set: map[string]string{"owner": "Zed", "Notes": "a|b"}},
		check: func(t *testing.T, after Task) {
			if after.Status != "IN_PROGRESS" || after.Extra["Owner"] != "Zed" || after.Extra["Notes"] != "a|b" {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e2", Priority: "P1", Difficulty: "hard", Description: "Goes into the P1 table"},
	},
	{
		file:   "nopipes.md",
		id:     "abc001",
		update: Update{Difficulty: Str("hard")},
		check: func(t *testing.T, after Task) {
			if after.Difficulty != "hard" {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e3", Description: "No outer pipes either"},
	},
	{
		file:   "nofinalnewline.md",
		id:     "f00002",
		update: Update{Status: Str("TODO"), Description: Str(`ends with a backslash \`)},
		check: func(t *testing.T, after Task) {
			if after.Status != "TODO" || after.Description != `ends with a backslash \` {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e4", Description: "Still no final newline"},
	},
	{
		file:   "bom_crlf.md",
		id:     "b0b0b0",
		update: Update{Status: Str("DONE")},
		check: func(t *testing.T, after Task) {
			if after.Status != "DONE" {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e7", Priority: "P3", Description: "Second row"},
	},
	{
		file: "other_tables.md",
		add:  Task{ID: "e0e0e5", Description: "First row of a header-only table", Mode: "coder"},
	},
	{
		file:   "fenced.md",
		id:     "444444",
		update: Update{Status: Str("BLOCKED")},
		check: func(t *testing.T, after Task) {
			if after.Status != "BLOCKED" {
				t.Errorf("after update: %+v", after)
			}
		},
		add: Task{ID: "e0e0e6", Description: "After the real table, not in the fence"},
	},
}

// TestEditGoldens applies one update and one add to corpus files and compares
// the full resulting bytes with testdata/golden/NAME.edited.md.
func TestEditGoldens(t *testing.T) {
	for _, eg := range editGoldens {
		t.Run(eg.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "corpus", eg.file))
			if err != nil {
				t.Fatal(err)
			}
			d := Parse(src)
			nTasks := len(d.Tasks())
			if eg.id != "" {
				before, ok := d.Task(eg.id)
				if !ok {
					t.Fatalf("no task %s", eg.id)
				}
				prev := append([]byte{}, d.Bytes()...)
				after, err := d.UpdateTask(eg.id, eg.update, goldenNow)
				if err != nil {
					t.Fatal(err)
				}
				assertOneLineChanged(t, prev, d.Bytes(), before.Line)
				eg.check(t, after)
				if re, _ := Parse(d.Bytes()).Task(eg.id); re.Line != before.Line || re.Description != after.Description || re.Status != after.Status {
					t.Errorf("reparsed task %+v differs from the returned one %+v", re, after)
				}
			}
			prev := append([]byte{}, d.Bytes()...)
			added, err := d.CreateTask(eg.add, goldenNow)
			if err != nil {
				t.Fatal(err)
			}
			assertOneLineAdded(t, prev, d.Bytes(), added.Line)
			wantDesc := strings.Join(strings.Fields(eg.add.Description), " ")
			if added.ID != eg.add.ID || added.Description != wantDesc || added.Status != "TODO" || added.Created != "" && added.Created != "2026-07-01" {
				t.Errorf("added task: %+v", added)
			}
			re := Parse(d.Bytes())
			if got, want := len(re.Diagnostics()), len(Parse(src).Diagnostics()); got != want {
				t.Errorf("edited file has diagnostics %v, the original %d", re.Diagnostics(), want)
			}
			if len(re.Tasks()) != nTasks+1 {
				t.Errorf("edited file has %d tasks, want %d", len(re.Tasks()), nTasks+1)
			}
			checkGolden(t, strings.TrimSuffix(eg.file, ".md")+".edited.md", d.Bytes())
		})
	}
}
