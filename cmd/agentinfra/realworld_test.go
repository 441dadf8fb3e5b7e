package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/matrix"
)

// The real-world corpus (issue 9) lives at the repository root; see its
// README. Each case is a workspace; ids.txt next to its .agent/ lists the IDs
// a correct reader returns, in file order, and is not copied.
var realworldDir = filepath.Join("..", "..", "testdata", "realworld")

// realworldCases are the folders of the corpus (gen/ is its generator).
func realworldCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(realworldDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "gen" {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) == 0 {
		t.Fatal("no cases in " + realworldDir)
	}
	return cases
}

type realworldCommand struct {
	golden string // golden file name, without .txt
	args   []string
	gfm    bool // also record what GitHub shows of the matrix afterwards
}

// realworldCommands are the commands recorded for case c: the same for every
// case, plus show and update of rows that real files make hard to read.
func realworldCommands(c string) []realworldCommand {
	cmds := []realworldCommand{
		{"validate", []string{"validate"}, false},
		{"validate_json", []string{"validate", "--format", "json"}, false},
		{"list", []string{"task", "list"}, false},
		{"list_json", []string{"task", "list", "--json"}, false},
		{"list_todo", []string{"task", "list", "--status", "TODO"}, false},
		{"create", []string{"task", "create", "--description", "Retry uploads after `ECONNRESET` 🔁", "--mode", "code"}, false},
		{"fix_dry_run", []string{"validate", "--fix", "--dry-run"}, false},
		{"fix", []string{"validate", "--fix"}, true},
	}
	switch c {
	case "timestamps":
		cmds = append(cmds,
			// Its Description holds a fenced bash block with pipes.
			realworldCommand{"show_continued", []string{"task", "show", "260103114541"}, false},
			// A row that goes on over lines, ending `see thread | date | date |`.
			realworldCommand{"update_continued", []string{"task", "update", "260117212207", "--status", "DONE"}, false},
			// The last row, after 33 continued rows.
			realworldCommand{"update_last", []string{"task", "update", "260120171931", "--status", "DONE"}, false},
			// Diff `M` (an alias in config.yaml) repaired by writing `med`.
			realworldCommand{"update_alias", []string{"task", "update", "260101230540", "--difficulty", "med"}, false},
			realworldCommand{"fix_move_dry_run", []string{"validate", "--fix=move", "--dry-run"}, false},
		)
	case "dashes":
		cmds = append(cmds,
			realworldCommand{"show_values", []string{"task", "show", "TASK-12"}, false},
			// Em dashes in every list cell; the update writes Updated only.
			realworldCommand{"update_status", []string{"task", "update", "TASK-4", "--status", "DONE"}, false},
			// Writing a value into a `-` cell replaces the dash.
			realworldCommand{"update_replaces_dash", []string{"task", "update", "TASK-2", "--agent", "@codex", "--skills", "rust-cli", "--set", "Research=research/retry.md"}, false},
		)
	case "legacy":
		cmds = append(cmds,
			realworldCommand{"migrate_dry_run", []string{"migrate", "--dry-run"}, false},
			realworldCommand{"migrate", []string{"migrate"}, false},
		)
	case "cellcounts":
		cmds = append(cmds,
			realworldCommand{"show_9_cells", []string{"task", "show", "e7f809"}, false},
			realworldCommand{"show_11_cells", []string{"task", "show", "091a2b"}, false},
			realworldCommand{"update_9_cells", []string{"task", "update", "3c4d5f", "--status", "DONE"}, false},
			realworldCommand{"update_good_row", []string{"task", "update", "b4c5d6", "--status", "DONE"}, false},
		)
	}
	return cmds
}

// realworldWorkspace copies case c into a fresh temp dir.
func realworldWorkspace(t *testing.T, c string) string {
	t.Helper()
	src := filepath.Join(realworldDir, c)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "ids.txt" {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// realworldIDs is ids.txt of case c.
func realworldIDs(t *testing.T, c string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realworldDir, c, "ids.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// rwTreeSnapshot maps each workspace-relative path to its content; folders end
// in "/" and map to "". The lock sidecar and the previous version are left
// out: every write creates them (the previous version is the matrix before,
// which the golden shows already).
func rwTreeSnapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.Name() == ".DEVELOPMENT_MATRIX.md.lock", d.Name() == ".DEVELOPMENT_MATRIX.md.prev":
		case d.IsDir():
			snap[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			snap[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// rwTreeChanges describes how after differs from before: one line per added
// (A), removed (D) or modified (M) path, modified and added files followed by
// a unified diff.
func rwTreeChanges(before, after map[string]string) string {
	var paths []string
	for p := range before {
		paths = append(paths, p)
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		old, inBefore := before[p]
		cur, inAfter := after[p]
		switch {
		case !inAfter:
			b.WriteString("D " + p + "\n")
		case !inBefore:
			b.WriteString("A " + p + "\n")
			if !strings.HasSuffix(p, "/") {
				b.WriteString(rwUnifiedDiff(p, "", cur, 2))
			}
		case old != cur:
			b.WriteString("M " + p + "\n")
			b.WriteString(rwUnifiedDiff(p, old, cur, 2))
		}
	}
	if b.Len() == 0 {
		return "(unchanged)\n"
	}
	return b.String()
}

var (
	rwNewHexID = regexp.MustCompile(`^[0-9a-f]{6}$`)
	rwRowHexID = regexp.MustCompile(`\| ([0-9a-f]{6}) \|`)
)

// runRealworld runs args on a fresh copy of case c and renders what a user
// sees: the command, exit code, stdout, stderr and every change to the
// workspace, with the temp path as $WORK and today's date as <TODAY>. A
// random 6-hex ID from create becomes <NEW-ID>; IDs that follow the file's
// convention (derived from the pinned clock) are kept, so the golden shows them.
func runRealworld(t *testing.T, c string, rc realworldCommand) string {
	args := rc.args
	t.Helper()
	root := realworldWorkspace(t, c)
	before := rwTreeSnapshot(t, root)
	code, stdout, stderr := runCLI(t, root, cliOpts{}, args...)
	after := rwTreeSnapshot(t, root)

	var b strings.Builder
	b.WriteString("$ agentinfra " + rwCommandLine(args) + "\n")
	b.WriteString("exit: " + rwItoa(code) + "\n")
	b.WriteString("--- stdout\n" + rwSection(stdout))
	b.WriteString("--- stderr\n" + rwSection(stderr))
	b.WriteString("--- workspace changes\n" + rwTreeChanges(before, after))
	if rc.gfm {
		b.WriteString("--- what GitHub shows of the matrix (strict GFM tables)\n" + rwGFMView(after[".agent/DEVELOPMENT_MATRIX.md"]))
	}
	out := b.String()

	if len(args) > 1 && args[1] == "create" && code == 0 {
		if id := strings.TrimSpace(stdout); rwNewHexID.MatchString(id) && !strings.Contains(before[".agent/DEVELOPMENT_MATRIX.md"], id) {
			out = strings.ReplaceAll(out, id, "<NEW-ID>")
		}
	}
	// migrate draws a random 6-hex ID per item: number them in order.
	if len(args) > 0 && args[0] == "migrate" {
		n := 0
		out = rwRowHexID.ReplaceAllStringFunc(out, func(m string) string {
			id := rwRowHexID.FindStringSubmatch(m)[1]
			if strings.Contains(before[".agent/DEVELOPMENT_MATRIX.md"], id) {
				return m
			}
			n++
			return strings.Replace(m, id, "<ID-"+rwItoa(n)+">", 1)
		})
	}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		out = strings.ReplaceAll(out, real, "$WORK")
	}
	out = strings.ReplaceAll(out, root, "$WORK")
	return strings.ReplaceAll(out, matrix.Today(taskNow), "<TODAY>")
}

// rwGFMView lists the tables a GFM renderer finds in src: each header, and
// for a task table (ID and Status columns) every row's line and ID cell, so
// the golden shows which rows GitHub loses.
func rwGFMView(src string) string {
	tables := gfmtable.Parse([]byte(src))
	if len(tables) == 0 {
		return "(no tables)\n"
	}
	var b strings.Builder
	for _, tb := range tables {
		where := "table"
		if !tb.TopLevel {
			where = "nested table"
		}
		fmt.Fprintf(&b, "%s at line %d, %d rows: | %s |\n", where, tb.Line, len(tb.Rows), strings.Join(tb.Header, " | "))
		id := tb.Column("ID")
		if id < 0 || tb.Column("Status") < 0 {
			continue
		}
		for _, r := range tb.Rows {
			fmt.Fprintf(&b, "  %d: %s\n", r.Line, r.Cells[id])
		}
	}
	return b.String()
}

func rwSection(s string) string {
	switch {
	case s == "":
		return "(empty)\n"
	case !strings.HasSuffix(s, "\n"):
		return s + "\n(no final newline)\n"
	}
	return s
}

func rwItoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// rwCommandLine quotes the arguments that a shell would split or expand.
func rwCommandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		plain := a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == '@' || r == ',' ||
				r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
		}) < 0
		q[i] = a
		if !plain {
			q[i] = shellQuote(a)
		}
	}
	return strings.Join(q, " ")
}

// checkRealworldGolden compares got with testdata/realworld/<c>/<name>.txt
// (the golden harness), or rewrites it with -update.
func checkRealworldGolden(t *testing.T, c, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "realworld", c, name+".txt"), got)
}

// TestRealworldGoldens records what the CLI does on each real-world case.
// The goldens are the review surface of issue 9: they show every row the
// reader sees, every diagnostic, and exactly which bytes a write changed.
func TestRealworldGoldens(t *testing.T) {
	for _, c := range realworldCases(t) {
		for _, cmd := range realworldCommands(c) {
			t.Run(c+"/"+cmd.golden, func(t *testing.T) {
				checkRealworldGolden(t, c, cmd.golden, runRealworld(t, c, cmd))
			})
		}
	}
}

// An unused golden is a command that was renamed or dropped: remove it.
func TestRealworldNoStaleGoldens(t *testing.T) {
	if golden.Updating() {
		t.Skip("-update rewrites the goldens; stale ones are reported on the next run")
	}
	for _, c := range realworldCases(t) {
		files, _ := filepath.Glob(filepath.Join("testdata", "realworld", c, "*.txt"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".txt")
			if !slices.ContainsFunc(realworldCommands(c), func(rc realworldCommand) bool { return rc.golden == name }) {
				t.Errorf("%s belongs to no command of case %s; delete it", f, c)
			}
		}
	}
}

// rwListIDs runs `task list --json` and returns the IDs and stderr.
func rwListIDs(t *testing.T, root string) ([]matrix.Task, string) {
	t.Helper()
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--json")
	// Exit 1 with the rows it read is how a partial read ends: never 0.
	if partial := code == 1 && errOut != ""; code != 0 && !partial {
		t.Fatalf("task list --json: exit %d, stderr %q", code, errOut)
	}
	var tasks []matrix.Task
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		t.Fatalf("task list --json: %v\n%s", err, out)
	}
	return tasks, errOut
}

func rwTaskIDs(tasks []matrix.Task) []string {
	ids := make([]string, len(tasks))
	for i, tk := range tasks {
		ids[i] = tk.ID
	}
	return ids
}

var rwDateCell = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// Every row people wrote is read, or the reader says on stderr which it could
// not read; what it returns is in file order and is never shifted cells.
func TestRealworldListReadsEveryRow(t *testing.T) {
	for _, c := range realworldCases(t) {
		want := realworldIDs(t, c)
		if len(want) == 0 {
			continue // no task table: see the legacy goldens
		}
		t.Run(c, func(t *testing.T) {
			root := realworldWorkspace(t, c)
			tasks, stderr := rwListIDs(t, root)
			got := rwTaskIDs(tasks)
			var unread, silent []string
			for _, id := range want {
				if !slices.Contains(got, id) {
					unread = append(unread, id)
					if !strings.Contains(stderr, id) {
						silent = append(silent, id)
					}
				}
			}
			if len(silent) > 0 {
				t.Errorf("%d of %d rows are neither listed nor named on stderr: %v\nstderr: %q", len(silent), len(want), silent, stderr)
			}
			wantListed := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return slices.Contains(unread, id) })
			if !slices.Equal(got, wantListed) {
				t.Errorf("listed IDs\n%v\nwant (ids.txt, file order, minus the unread %v)\n%v", got, unread, wantListed)
			}
			var wantTODO []string
			for _, tk := range tasks {
				if tk.Status == "TODO" {
					wantTODO = append(wantTODO, tk.ID)
				}
			}
			code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--status", "TODO", "--json")
			var todo []matrix.Task
			if len(unread) > 0 && code != 1 {
				t.Errorf("task list --status TODO exited %d on a matrix with unread rows; want 1", code)
			}
			if err := json.Unmarshal([]byte(out), &todo); code > 1 || err != nil {
				t.Fatalf("task list --status TODO --json: exit %d, %v, stderr %q", code, err, errOut)
			}
			if got := rwTaskIDs(todo); !slices.Equal(got, wantTODO) {
				t.Errorf("task list --status TODO = %v, want the TODO rows of the full list %v", got, wantTODO)
			}
			for _, tk := range tasks {
				// Every case writes an @ before each agent and words in each
				// description: anything else is a neighbour's cell.
				agentsOK := !slices.ContainsFunc(tk.Agents, func(a string) bool { return !strings.HasPrefix(a, "@") })
				if !slices.Contains(matrix.Statuses, tk.Status) || tk.Created != "" && !rwDateCell.MatchString(tk.Created) ||
					tk.Updated != "" && !rwDateCell.MatchString(tk.Updated) || !agentsOK ||
					strings.TrimSpace(tk.Description) == "" || rwDateCell.MatchString(tk.Description) {
					t.Errorf("task %s (line %d) looks like shifted cells (or a `-` read as a value): status %q, agents %q, description %q, created %q, updated %q",
						tk.ID, tk.Line, tk.Status, tk.Agents, tk.Description, tk.Created, tk.Updated)
				}
			}
		})
	}
}

// rwFixFlag skips the test while `validate --fix` does not exist, and tells
// whether it takes a value (--fix=move).
func rwFixFlag(t testing.TB) (takesValue bool) {
	t.Helper()
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}}
	cmd, _, err := newRootCmd(f).Find([]string{"validate"})
	if err != nil {
		t.Fatal(err)
	}
	fl := cmd.Flags().Lookup("fix")
	if fl == nil {
		t.Skip("`validate --fix` does not exist yet (issue 9); this rule runs as soon as it does")
	}
	return fl.NoOptDefVal != "" && fl.Value.Type() != "bool"
}

// After `validate --fix`, `task list --json` returns the same set of IDs as before.
func TestRealworldFixKeepsIDs(t *testing.T) {
	rwFixFlag(t)
	for _, c := range realworldCases(t) {
		if len(realworldIDs(t, c)) == 0 {
			continue
		}
		t.Run(c, func(t *testing.T) {
			root := realworldWorkspace(t, c)
			before, _ := rwListIDs(t, root)
			runCLI(t, root, cliOpts{}, "validate", "--fix")
			after, _ := rwListIDs(t, root)
			b, a := rwTaskIDs(before), rwTaskIDs(after)
			slices.Sort(b)
			slices.Sort(a)
			if !slices.Equal(a, b) {
				t.Errorf("IDs after --fix\n%v\nwant the IDs before\n%v", a, b)
			}
		})
	}
}

// After `validate --fix`, GitHub (a strict GFM renderer) sees one task table
// with one row per task.
func TestRealworldFixLeavesOneGFMTable(t *testing.T) {
	rwFixFlag(t)
	for _, c := range realworldCases(t) {
		want := realworldIDs(t, c)
		if len(want) == 0 {
			continue
		}
		t.Run(c, func(t *testing.T) {
			root := realworldWorkspace(t, c)
			runCLI(t, root, cliOpts{}, "validate", "--fix")
			listed, stderr := rwListIDs(t, root)
			var taskTables []gfmtable.Table
			for _, tb := range gfmtable.Parse([]byte(matrixOf(t, root))) {
				if tb.Column("ID") >= 0 && tb.Column("Status") >= 0 {
					taskTables = append(taskTables, tb)
				}
			}
			if len(taskTables) != 1 {
				t.Fatalf("GFM sees %d task tables after --fix, want 1: %+v", len(taskTables), taskTables)
			}
			tb := taskTables[0]
			var seen []string
			for _, r := range tb.Rows {
				seen = append(seen, r.Cells[tb.Column("ID")])
			}
			if !slices.Equal(seen, want) {
				t.Errorf("GFM rows of the task table (ID cells):\n%v\nwant one per task of ids.txt, in order:\n%v", seen, want)
			}
			// A row with the wrong number of cells cannot be fixed
			// automatically (--fix says so): GFM shows it, the reader names
			// it on stderr. Every other row GFM shows is a listed task.
			readable := slices.DeleteFunc(slices.Clone(seen), func(id string) bool {
				return !slices.Contains(rwTaskIDs(listed), id) && strings.Contains(stderr, id)
			})
			if got := rwTaskIDs(listed); !slices.Equal(got, readable) {
				t.Errorf("task list --json after --fix\n%v\ndiffers from the rows GFM sees (minus the unreadable rows named on stderr)\n%v", got, readable)
			}
		})
	}
}

// Every non-space character of the original matrix is still in the workspace
// after `validate --fix`: in the matrix, or in a task README the fix wrote.
func TestRealworldFixKeepsEveryCharacter(t *testing.T) {
	modes := [][]string{{"validate", "--fix"}}
	if rwFixFlag(t) {
		modes = append(modes, []string{"validate", "--fix=move"})
	}
	for _, c := range realworldCases(t) {
		for _, args := range modes {
			t.Run(c+"/"+args[1], func(t *testing.T) {
				root := realworldWorkspace(t, c)
				before := rwTreeSnapshot(t, root)
				runCLI(t, root, cliOpts{}, args...)
				after := rwTreeSnapshot(t, root)
				lost := rwLostCharacters(before, after)
				if len(lost) > 0 {
					t.Errorf("%s lost characters of the matrix: %v\n%s", strings.Join(args, " "), lost, rwTreeChanges(before, after))
				}
			})
		}
	}
}

var rwTaskReadme = regexp.MustCompile(`^\.agent/tasks/[^/]+/README\.md$`)

// rwLostCharacters returns the non-space characters of the matrix in before
// that are missing from after's matrix plus what after added to task READMEs,
// as "c ×n", sorted.
func rwLostCharacters(before, after map[string]string) []string {
	const matrixRel = ".agent/DEVELOPMENT_MATRIX.md"
	have := rwRuneCounts(after[matrixRel])
	for p, cur := range after {
		if rwTaskReadme.MatchString(p) && cur != before[p] {
			old := rwRuneCounts(before[p])
			for r, n := range rwRuneCounts(cur) {
				have[r] += n - old[r]
			}
		}
	}
	var lost []string
	for r, n := range rwRuneCounts(before[matrixRel]) {
		if have[r] < n {
			lost = append(lost, fmt.Sprintf("%q ×%d", r, n-have[r]))
		}
	}
	sort.Strings(lost)
	return lost
}

func rwRuneCounts(s string) map[rune]int {
	m := map[rune]int{}
	for _, r := range s {
		if !unicode.IsSpace(r) {
			m[r]++
		}
	}
	return m
}
