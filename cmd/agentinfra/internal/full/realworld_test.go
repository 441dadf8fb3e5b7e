package full

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/testing/gfmtable"
	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/matrix"
)

// The real-world corpus (issue 9) lives at the repository root; see its
// README. Each case is a workspace; ids.txt next to its .agent/ lists the IDs
// a correct reader returns, in file order, and is not copied.
var realworldDir = filepath.Join("..", "..", "..", "..", "testdata", "realworld")

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
	// prep are commands run first, unrecorded (the state args runs in).
	prep [][]string
	// git makes the workspace a git repository, everything committed, before
	// the command, and records `git status --porcelain` after it.
	git bool
}

// realworldCommands are the commands recorded for case c: the same for every
// case, plus show and update of rows that real files make hard to read.
func realworldCommands(c string) []realworldCommand {
	cmds := []realworldCommand{
		{golden: "validate", args: []string{"validate"}},
		{golden: "validate_json", args: []string{"validate", "--format", "json"}},
		{golden: "list", args: []string{"task", "list"}},
		{golden: "list_json", args: []string{"task", "list", "--json"}},
		{golden: "list_todo", args: []string{"task", "list", "--status", "TODO"}},
		{golden: "create", args: []string{"task", "create", "--description", "Retry uploads after `ECONNRESET` 🔁", "--mode", "code"}},
		{golden: "fix_dry_run", args: []string{"validate", "--fix", "--dry-run"}},
		{golden: "fix", args: []string{"validate", "--fix"}, gfm: true},
	}
	switch c {
	case "timestamps":
		cmds = append(cmds,
			// Its Description holds a fenced bash block with pipes.
			realworldCommand{golden: "show_continued", args: []string{"task", "show", "260103114541"}},
			// A row that goes on over lines, ending `see thread | date | date |`.
			realworldCommand{golden: "update_continued", args: []string{"task", "update", "260117212207", "--status", "DONE"}},
			// The last row, after 33 continued rows.
			realworldCommand{golden: "update_last", args: []string{"task", "update", "260120171931", "--status", "DONE"}},
			// Diff `M` (an alias in config.yaml) repaired by writing `med`.
			realworldCommand{golden: "update_alias", args: []string{"task", "update", "260101230540", "--difficulty", "med"}},
			realworldCommand{golden: "fix_move_dry_run", args: []string{"validate", "--fix=move", "--dry-run"}},
		)
	case "dashes":
		cmds = append(cmds,
			realworldCommand{golden: "show_values", args: []string{"task", "show", "TASK-12"}},
			// Em dashes in every list cell; the update writes Updated only.
			realworldCommand{golden: "update_status", args: []string{"task", "update", "TASK-4", "--status", "DONE"}},
			// Writing a value into a `-` cell replaces the dash.
			realworldCommand{golden: "update_replaces_dash", args: []string{"task", "update", "TASK-2", "--agent", "@codex", "--skills", "rust-cli", "--set", "Research=research/retry.md"}},
		)
	case "legacy":
		cmds = append(cmds,
			realworldCommand{golden: "migrate_dry_run", args: []string{"migrate", "--dry-run"}},
			realworldCommand{golden: "migrate", args: []string{"migrate"}},
		)
	case "legacy-sections":
		cmds = append(cmds,
			realworldCommand{golden: "migrate_dry_run", args: []string{"migrate", "--dry-run"}},
			realworldCommand{golden: "migrate", args: []string{"migrate"}, gfm: true},
			// Once migrated, there is nothing to migrate: not an error.
			realworldCommand{golden: "migrate_again", args: []string{"migrate"}, prep: [][]string{{"migrate"}}},
			realworldCommand{golden: "list_after_migrate", args: []string{"task", "list", "--sort", "priority"}, prep: [][]string{{"migrate"}}},
		)
	case "fence-close":
		cmds = append(cmds,
			// A code block that closes on the row's last line: "```  | date | date |".
			realworldCommand{golden: "show_fence", args: []string{"task", "show", "260121185712"}},
			// The agent gets the code as written, line by line.
			realworldCommand{golden: "prompt_fence", args: []string{"prompt", "260121185712"}},
			// A code block that never closes: named by the line that opened it.
			realworldCommand{golden: "show_unclosed", args: []string{"task", "show", "260124170345"}},
			// The row after it is read, and can be changed.
			realworldCommand{golden: "update_after_unclosed", args: []string{"task", "update", "260125093000", "--status", "REVIEW"}},
		)
	case "duplicates":
		cmds = append(cmds,
			realworldCommand{golden: "show_duplicate", args: []string{"task", "show", "BILL-4"}},
			realworldCommand{golden: "prompt_duplicate", args: []string{"prompt", "BILL-3"}},
			realworldCommand{golden: "update_duplicate", args: []string{"task", "update", "BILL-3", "--status", "DONE"}},
			realworldCommand{golden: "show_unique", args: []string{"task", "show", "BILL-5"}},
		)
	case "br-cells":
		cmds = append(cmds,
			realworldCommand{golden: "show_br", args: []string{"task", "show", "4f1a21"}},
			realworldCommand{golden: "show_br_json", args: []string{"task", "show", "4f1a23", "--json"}},
			realworldCommand{golden: "prompt_code", args: []string{"prompt", "4f1a23"}},
			realworldCommand{golden: "context_code", args: []string{"task", "context", "4f1a23"}},
			realworldCommand{golden: "create_multiline", args: []string{"task", "create", "--mode", "code", "--description", "Config reload:\n1. watch `config.toml`\n2. reload on change\n\n```sh\ntally --watch | head\n```"}},
			realworldCommand{golden: "update_multiline", args: []string{"task", "update", "4f1a22", "--description", "Crash on empty log file.\nRepro: `touch empty.log && tally empty.log`"}},
			realworldCommand{golden: "handoff", args: []string{"handoff", "--out", "HANDOFF.md"}},
		)
	case "no-agents":
		claim := []string{"task", "claim", "251207093000", "--agent", "@alice"}
		cmds = append(cmds,
			// No Agents column: the holder goes to the task README.
			realworldCommand{golden: "claim", args: claim},
			realworldCommand{golden: "claim_taken", args: []string{"task", "claim", "251207093000", "--agent", "@bob"}, prep: [][]string{claim}},
			realworldCommand{golden: "show_claimed", args: []string{"task", "show", "251207093000"}, prep: [][]string{claim}},
			realworldCommand{golden: "update_agent", args: []string{"task", "update", "251204101500", "--agent", "@carol"}},
			realworldCommand{golden: "dispatch_dry_run", args: []string{"dispatch", "251204101500", "--dry-run"}},
			realworldCommand{golden: "add_columns_dry_run", args: []string{"migrate", "--add-columns", "--dry-run"}, prep: [][]string{claim}},
			realworldCommand{golden: "add_columns", args: []string{"migrate", "--add-columns=Agents"}, prep: [][]string{claim}},
			// No priority sorts last; --set Pri= clears one.
			realworldCommand{golden: "list_by_priority", args: []string{"task", "list", "--sort", "priority"}},
			realworldCommand{golden: "list_ready", args: []string{"task", "list", "--ready", "--sort", "priority"}},
			realworldCommand{golden: "clear_priority", args: []string{"task", "update", "251208150000", "--set", "Pri="}},
			// A workspace init did not make: the lock file stays out of git status.
			realworldCommand{golden: "update_git_status", args: []string{"task", "update", "251204101500", "--status", "IN_PROGRESS"}, git: true},
		)
	case "empty", "not-a-matrix":
		cmds = append(cmds, realworldCommand{golden: "migrate", args: []string{"migrate"}})
	case "symlinks":
		cmds = append(cmds,
			// Symlinks out of the workspace (to /etc/passwd): refused, never read.
			realworldCommand{golden: "show_readme_link", args: []string{"task", "show", "7a1c00"}},
			realworldCommand{golden: "prompt_readme_link", args: []string{"prompt", "7a1c00"}},
			realworldCommand{golden: "context_readme_link", args: []string{"task", "context", "7a1c00"}},
			realworldCommand{golden: "dispatch_readme_link", args: []string{"dispatch", "7a1c00", "--dry-run"}},
			realworldCommand{golden: "prompt_mode_link", args: []string{"prompt", "7a1c01"}},
			realworldCommand{golden: "prompt_skill_link", args: []string{"prompt", "7a1c02"}},
			realworldCommand{golden: "mode_list", args: []string{"mode", "list"}},
			realworldCommand{golden: "skill_list", args: []string{"skill", "list"}},
			// A symlink that stays inside: read.
			realworldCommand{golden: "prompt_inside_link", args: []string{"prompt", "7a1c03"}},
		)
	case "cellcounts":
		cmds = append(cmds,
			realworldCommand{golden: "show_9_cells", args: []string{"task", "show", "e7f809"}},
			realworldCommand{golden: "show_11_cells", args: []string{"task", "show", "091a2b"}},
			realworldCommand{golden: "update_9_cells", args: []string{"task", "update", "3c4d5f", "--status", "DONE"}},
			realworldCommand{golden: "update_good_row", args: []string{"task", "update", "b4c5d6", "--status", "DONE"}},
		)
	}
	return cmds
}

// realworldWorkspace copies case c into a fresh temp dir (symlinks as
// symlinks, as a clone has them).
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
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, filepath.Join(dst, rel))
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
		case rel == "." || rel == ".git" || strings.HasPrefix(rel, ".git/"):
			if d.IsDir() && rel == ".git" {
				return filepath.SkipDir
			}
		case d.Name() == ".DEVELOPMENT_MATRIX.md.lock", d.Name() == ".DEVELOPMENT_MATRIX.md.prev":
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p) // never followed: it may point anywhere
			snap[rel] = "symlink -> " + target
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
	original := rwTreeSnapshot(t, root)[".agent/DEVELOPMENT_MATRIX.md"]
	for _, p := range rc.prep {
		if code, _, stderr := runCLI(t, root, cliOpts{}, p...); code != 0 {
			t.Fatalf("prep %v: exit %d: %s", p, code, stderr)
		}
	}
	if rc.git {
		rwGit(t, root, "init", "-q")
		rwGit(t, root, "add", "-A")
		rwGit(t, root, "commit", "-qm", "the workspace as cloned")
	}
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
	if rc.git {
		b.WriteString("--- git status --porcelain\n" + rwSection(rwGit(t, root, "status", "--porcelain")))
	}
	out := b.String()

	if len(args) > 1 && args[1] == "create" && code == 0 {
		if id := strings.TrimSpace(stdout); rwNewHexID.MatchString(id) && !strings.Contains(before[".agent/DEVELOPMENT_MATRIX.md"], id) {
			out = strings.ReplaceAll(out, id, "<NEW-ID>")
		}
	}
	// migrate draws a random 6-hex ID per item: number them in order (after
	// a migration done first, in the order the matrix holds them).
	if len(rc.prep) > 0 {
		for i, id := range matrix.Parse([]byte(before[".agent/DEVELOPMENT_MATRIX.md"])).IDs() {
			if !strings.Contains(original, id) {
				out = strings.ReplaceAll(out, id, "<ID-"+rwItoa(i+1)+">")
			}
		}
	} else if len(args) > 0 && args[0] == "migrate" {
		n := 0
		named := map[string]string{}
		out = rwRowHexID.ReplaceAllStringFunc(out, func(m string) string {
			id := rwRowHexID.FindStringSubmatch(m)[1]
			if strings.Contains(before[".agent/DEVELOPMENT_MATRIX.md"], id) {
				return m
			}
			n++
			named[id] = "<ID-" + rwItoa(n) + ">"
			return strings.Replace(m, id, named[id], 1)
		})
		for id, name := range named { // elsewhere (what GitHub shows)
			out = strings.ReplaceAll(out, id, name)
		}
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
			q[i] = cli.ShellQuote(a)
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
	f := &Factory{&cli.Factory{IO: &cli.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}}}
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
			// A row that never ends cannot be fixed automatically (--fix
			// says so, and the reader names it on stderr): GFM ends the
			// table in it, and an unclosed code block in it takes the rows
			// after it too. The table GitHub shows then ends at that row.
			wantGFM, cut := want, ""
			for i, id := range want {
				if !slices.Contains(rwTaskIDs(listed), id) && strings.Contains(stderr, "row of task "+id+" starting at line") {
					wantGFM, cut = want[:i+1], id
					break
				}
			}
			if !slices.Equal(seen, wantGFM) {
				t.Errorf("GFM rows of the task table (ID cells):\n%v\nwant one per task of ids.txt, in order (up to the row that never ends, %q):\n%v", seen, cut, wantGFM)
			}
			// A row with the wrong number of cells cannot be fixed
			// automatically (--fix says so): GFM shows it, the reader names
			// it on stderr. Every other row GFM shows is a listed task.
			readable := slices.DeleteFunc(slices.Clone(seen), func(id string) bool {
				return !slices.Contains(rwTaskIDs(listed), id) && strings.Contains(stderr, id)
			})
			got := rwTaskIDs(listed)
			if cut != "" {
				got = got[:min(len(got), len(readable))]
			}
			if !slices.Equal(got, readable) {
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

// rwGit runs git in dir and returns its output (a failure fails the test).
func rwGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A write in a workspace init did not make (no .agent/.gitignore) leaves
// git status listing only what it changed: the matrix, a task README, a new
// task folder — never the lock file (issue 19, item 12).
func TestRealworldWritesLeaveGitStatusClean(t *testing.T) {
	for _, c := range realworldCases(t) {
		ids := realworldIDs(t, c)
		if len(ids) == 0 {
			continue
		}
		t.Run(c, func(t *testing.T) {
			root := realworldWorkspace(t, c)
			rwGit(t, root, "init", "-q")
			rwGit(t, root, "add", "-A")
			rwGit(t, root, "commit", "-qm", "cloned")
			listed, _ := rwListIDs(t, root)
			if len(listed) == 0 {
				t.Skip("no readable row")
			}
			if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "update", listed[len(listed)-1].ID, "--status", "BLOCKED"); code != 0 {
				t.Fatalf("update: exit %d: %s", code, errOut)
			}
			for _, line := range strings.Split(strings.TrimRight(rwGit(t, root, "status", "--porcelain"), "\n"), "\n") {
				if line != " M .agent/DEVELOPMENT_MATRIX.md" && !(strings.HasPrefix(line, " M .agent/tasks/") && strings.HasSuffix(line, "/README.md")) {
					t.Errorf("git status lists %q after an update", line)
				}
			}
		})
	}
}
