package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/matrix"
)

// Issue 32: real `git merge`, `git rebase` and `git cherry-pick` of the
// matrix in temporary repositories where `agentinfra init` registered the
// merge driver. Each result is checked row by row and by `agentinfra
// validate`. Every case drives git and the built binary through a merge, a
// rebase and a cherry-pick (seconds each on 2 cores): the default run keeps
// one clean merge, one conflict, multi-line cells and the renumbering; the other shapes, each
// merged in package matrix by its own case, run with AGENTINFRA_E2E=1.

// mergeRepo is a git repository with a workspace, the driver registered
// by the built binary, and git's configuration isolated from the machine's.
type mergeRepo struct {
	t    *testing.T
	root string
	bin  string
}

func newMergeRepo(t *testing.T, src string) *mergeRepo {
	t.Helper()
	r := &mergeRepo{t: t, root: newValidateWorkspace(t, src), bin: taskBinary(t)}
	r.git("init", "-q", "-b", "main")
	if out, code := r.agentinfra("init"); code != 0 || !strings.Contains(out, "registered the matrix's merge driver") {
		t.Fatalf("agentinfra init: %d %s", code, out)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "base")
	return r
}

// gitEnv is the environment of every git and agentinfra process of these
// tests: no system or global git config, a fixed author, no editor.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_EDITOR=true", "AGENTINFRA_ROOT=")
}

func (r *mergeRepo) gitErr(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.root, gitEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (r *mergeRepo) git(args ...string) string {
	r.t.Helper()
	out, err := r.gitErr(args...)
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// agentinfra runs the built binary in the repository; it returns stdout and
// stderr together, and the exit code.
func (r *mergeRepo) agentinfra(args ...string) (string, int) {
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.root, gitEnv()
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

func (r *mergeRepo) matrix() string {
	return mustRead(r.t, filepath.Join(r.root, ".agent", "DEVELOPMENT_MATRIX.md"))
}

func (r *mergeRepo) setMatrix(s string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(s), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commitMatrix writes the matrix (and files, relative path → content) and commits.
func (r *mergeRepo) commitMatrix(msg, src string, files map[string]string) {
	r.t.Helper()
	r.setMatrix(src)
	for rel, content := range files {
		p := filepath.Join(r.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-qm", msg)
}

const mergeBase = `# Development Matrix

Prose before the table.

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| T-1 | TODO | P2 | med | coder | go-testing | @ann | First task | 2026-01-01 | 2026-01-01 |
| T-2 | TODO | P2 | med | coder |  |  | Second task | 2026-01-01 | 2026-01-01 |
| T-3 | TODO | P3 | easy | coder |  |  | Third task | 2026-01-01 | 2026-01-01 |

## Notes

Kept as written.
`

// mrow is a row of the test matrices.
func mrow(id, status, skills, agents, desc, updated string) string {
	return fmt.Sprintf("| %s | %s | P2 | med | coder | %s | %s | %s | 2026-01-01 | %s |", id, status, skills, agents, desc, updated)
}

// setRow replaces the row of id (its first line) with line; "" deletes it.
func setRow(src, id, line string) string {
	lines := strings.SplitAfter(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "| "+id+" |") {
			eol := l[len(strings.TrimRight(l, "\r\n")):]
			if line == "" {
				return strings.Join(append(lines[:i:i], lines[i+1:]...), "")
			}
			lines[i] = line + eol
			return strings.Join(lines, "")
		}
	}
	panic("no row " + id)
}

// addAfter puts line after the row of id.
func addAfter(src, id, line string) string {
	lines := strings.SplitAfter(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "| "+id+" |") {
			eol := l[len(strings.TrimRight(l, "\r\n")):]
			return strings.Join(append(lines[:i+1:i+1], append([]string{line + eol}, lines[i+1:]...)...), "")
		}
	}
	panic("no row " + id)
}

// mergeMode is one of git's ways to bring theirs onto ours: in each, ours
// is main's version and theirs the commit of branch theirs.
type mergeMode struct {
	name     string
	run      func(r *mergeRepo) (string, error)
	finish   []string // the command that completes it once the conflicts are finished
	resultOn string   // the branch that holds the result
}

var mergeModes = []mergeMode{
	{"merge", func(r *mergeRepo) (string, error) { return r.gitErr("merge", "--no-edit", "theirs") }, []string{"commit", "--no-edit"}, "main"},
	{"rebase", func(r *mergeRepo) (string, error) {
		r.git("checkout", "-q", "theirs")
		return r.gitErr("rebase", "main")
	}, []string{"rebase", "--continue"}, "theirs"},
	{"cherry-pick", func(r *mergeRepo) (string, error) { return r.gitErr("cherry-pick", "theirs") }, []string{"cherry-pick", "--continue"}, "main"},
}

// mergeCase is one scenario: two edits of the base; want is the merged
// file when it is clean. A conflicted case names the conflict's task, what
// validate must say, and how to finish it.
type mergeCase struct {
	base         string
	ours, theirs func(string) string
	// files are committed with each side's edit (task folders).
	oursFiles, theirsFiles map[string]string
	want                   string
	// With conflicts: what validate says, the --fix that finishes them,
	// and the file after it.
	validateSays []string
	fix          []string
	wantFixed    string
}

// copyRepo is a copy of r's repository (its driver registration included),
// for one more way to merge the same commits.
func (r *mergeRepo) copyRepo(t *testing.T) *mergeRepo {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "repo")
	if err := os.CopyFS(dst, os.DirFS(r.root)); err != nil {
		t.Fatal(err)
	}
	return &mergeRepo{t: t, root: dst, bin: r.bin}
}

// run plays c in a copy of one repository for each mode.
func (c mergeCase) run(t *testing.T) {
	setup := newMergeRepo(t, c.base)
	setup.git("checkout", "-q", "-b", "theirs")
	setup.commitMatrix("theirs", c.theirs(c.base), c.theirsFiles)
	setup.git("checkout", "-q", "main")
	setup.commitMatrix("ours", c.ours(c.base), c.oursFiles)
	for _, mode := range mergeModes {
		t.Run(mode.name, func(t *testing.T) {
			r := setup.copyRepo(t)
			out, err := mode.run(r)
			if c.validateSays == nil {
				if err != nil {
					t.Fatalf("git %s: %v\n%s\nmatrix:\n%s", mode.name, err, out, r.matrix())
				}
				r.checkResult(c.want)
				return
			}
			if err == nil {
				t.Fatalf("git %s merged cleanly, want a conflict:\n%s", mode.name, r.matrix())
			}
			if !strings.Contains(out, "agentinfra merge-driver:") {
				t.Errorf("git %s: the driver said nothing of the conflict:\n%s", mode.name, out)
			}
			vout, code := r.agentinfra("validate")
			if code != 1 {
				t.Errorf("validate on the conflicted matrix: exit %d, want 1\n%s", code, vout)
			}
			for _, s := range c.validateSays {
				if !strings.Contains(vout, s) {
					t.Errorf("validate says:\n%s\nwant it to say: %s", vout, s)
				}
			}
			if fout, code := r.agentinfra(append([]string{"validate"}, c.fix...)...); code != 0 {
				t.Fatalf("validate %v: exit %d\n%s", c.fix, code, fout)
			}
			r.git("add", "-A")
			r.git(mode.finish...)
			r.checkResult(c.wantFixed)
		})
	}
}

// checkResult compares the merged matrix with want row by row, then byte
// for byte, and runs validate on it.
func (r *mergeRepo) checkResult(want string) {
	r.t.Helper()
	got := r.matrix()
	gt, wt := matrix.Parse([]byte(got)).Tasks(), matrix.Parse([]byte(want)).Tasks()
	for i := 0; i < max(len(gt), len(wt)); i++ {
		switch {
		case i >= len(gt):
			r.t.Errorf("row %d: missing, want %s %+v", i+1, wt[i].ID, wt[i])
		case i >= len(wt):
			r.t.Errorf("row %d: %s, want no row", i+1, gt[i].ID)
		default:
			g, w := gt[i], wt[i]
			g.Line, g.EndLine, w.Line, w.EndLine = 0, 0, 0, 0
			if fmt.Sprint(g) != fmt.Sprint(w) {
				r.t.Errorf("row %d:\n got %+v\nwant %+v", i+1, g, w)
			}
		}
	}
	if got != want {
		r.t.Errorf("merged matrix:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "<<<<<<<") {
		r.t.Errorf("conflict markers left:\n%s", got)
	}
	if out, code := r.agentinfra("validate"); code != 0 {
		r.t.Errorf("validate: exit %d\n%s", code, out)
	}
}

func TestMergeDriverNewRowsOnBothSides(t *testing.T) {
	mergeCase{
		base: mergeBase,
		ours: func(s string) string {
			return addAfter(s, "T-3", mrow("T-4", "TODO", "", "", "Added on main", "2026-01-02"))
		},
		theirs: func(s string) string {
			return addAfter(s, "T-3", mrow("T-5", "TODO", "", "", "Added on the branch", "2026-01-03"))
		},
		want: addAfter(addAfter(mergeBase, "T-3", mrow("T-4", "TODO", "", "", "Added on main", "2026-01-02")),
			"T-4", mrow("T-5", "TODO", "", "", "Added on the branch", "2026-01-03")),
	}.run(t)
}

func TestMergeDriverDifferentRowsChanged(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID merges it, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	t1 := mrow("T-1", "DONE", "go-testing", "@ann", "First task", "2026-01-04")
	t3 := "| T-3 | TODO | P1 | easy | coder |  |  | Third task | 2026-01-01 | 2026-01-05 |"
	mergeCase{
		base:   mergeBase,
		ours:   func(s string) string { return setRow(s, "T-1", t1) },
		theirs: func(s string) string { return setRow(setRow(s, "T-3", t3), "T-2", "") }, // and T-2, unchanged on main, deleted
		want:   setRow(setRow(setRow(mergeBase, "T-1", t1), "T-3", t3), "T-2", ""),
	}.run(t)
}

func TestMergeDriverSameRowDifferentCells(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID merges it, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	mergeCase{
		base: mergeBase,
		ours: func(s string) string {
			return setRow(s, "T-2", mrow("T-2", "IN_PROGRESS", "", "@bob", "Second task", "2026-01-05"))
		},
		theirs: func(s string) string {
			return setRow(s, "T-2", mrow("T-2", "TODO", "", "", "Second task, with its acceptance criteria", "2026-01-03"))
		},
		// Updated takes the later date.
		want: setRow(mergeBase, "T-2", mrow("T-2", "IN_PROGRESS", "", "@bob", "Second task, with its acceptance criteria", "2026-01-05")),
	}.run(t)
}

func TestMergeDriverSameCellAlike(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID merges it, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	done := mrow("T-2", "DONE", "", "", "Second task", "2026-01-06")
	mergeCase{
		base: mergeBase,
		ours: func(s string) string { return setRow(s, "T-2", done) },
		theirs: func(s string) string {
			return addAfter(setRow(s, "T-2", done), "T-3", mrow("T-4", "TODO", "", "", "More", "2026-01-06"))
		},
		want: addAfter(setRow(mergeBase, "T-2", done), "T-3", mrow("T-4", "TODO", "", "", "More", "2026-01-06")),
	}.run(t)
}

// The same cell changed two ways: a conflict of that row alone, the rest
// merged; validate names the row, the cell and both values, and
// --fix=theirs finishes it.
func TestMergeDriverSameCellTwoWays(t *testing.T) {
	t1 := mrow("T-1", "DONE", "go-testing", "@ann", "First task", "2026-01-02")
	t4 := mrow("T-4", "TODO", "", "", "Added on the branch", "2026-01-02")
	oursT2 := mrow("T-2", "TODO", "", "", "Second task: ship the parser", "2026-01-03")
	theirsT2 := mrow("T-2", "TODO", "", "", "Second task: drop the parser", "2026-01-04")
	mergeCase{
		base:   mergeBase,
		ours:   func(s string) string { return setRow(setRow(s, "T-1", t1), "T-2", oursT2) },
		theirs: func(s string) string { return addAfter(setRow(s, "T-2", theirsT2), "T-3", t4) },
		// Updated is no conflict: both versions take the later date.
		validateSays: []string{
			`.agent/DEVELOPMENT_MATRIX.md:8:1: error: merge conflict in task T-2 (lines 8-12): both sides changed Description (ours "Second task: ship the parser", theirs "Second task: drop the parser"); ` +
				"finish with `agentinfra validate --fix=ours T-2` or `agentinfra validate --fix=theirs T-2`, or edit the lines into the one row you want and delete the marker lines\n",
			": 4 tasks; 1 error, 0 warnings",
		},
		fix: []string{"--fix=theirs", "T-2"},
		// Theirs' row, and T-1 and T-4 merged around it.
		wantFixed: addAfter(setRow(setRow(mergeBase, "T-1", t1), "T-2", theirsT2), "T-3", t4),
	}.run(t)
}

func TestMergeDriverDeleteVersusEdit(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID has the conflict, TestMergeDriverSameCellTwoWays a conflict through git and validate")
	t3 := mrow("T-3", "BLOCKED", "", "", "Third task", "2026-01-02")
	mergeCase{
		base:         mergeBase,
		ours:         func(s string) string { return setRow(s, "T-3", "") },
		theirs:       func(s string) string { return setRow(s, "T-3", t3) },
		validateSays: []string{"merge conflict in task T-3 (lines 9-12): theirs changed the row and ours deleted it; keep it with `agentinfra validate --fix=theirs T-3`, or delete it with `agentinfra validate --fix=ours T-3`"},
		fix:          []string{"--fix=theirs", "T-3"},
		wantFixed:    setRow(mergeBase, "T-3", t3),
	}.run(t)
}

func TestMergeDriverSetCells(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID merges set cells, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	mergeCase{
		base: mergeBase,
		ours: func(s string) string {
			return setRow(s, "T-1", mrow("T-1", "TODO", "go-testing, code-review", "@ann @bob", "First task", "2026-01-02"))
		},
		theirs: func(s string) string {
			return setRow(s, "T-1", mrow("T-1", "TODO", "go-testing, matrix-editing", "@cy", "First task", "2026-01-03"))
		},
		// Both additions; theirs removed @ann.
		want: setRow(mergeBase, "T-1", mrow("T-1", "TODO", "go-testing, code-review, matrix-editing", "@bob @cy", "First task", "2026-01-03")),
	}.run(t)
}

func TestMergeDriverColumnAddedOnOneSide(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeColumns merges it, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	withOwner := func(s string) string {
		s = strings.Replace(s, "| Updated |\n|----|", "| Updated | Owner |\n|----|", 1)
		s = strings.Replace(s, "|---------|---------|\n", "|---------|---------|-------|\n", 1)
		s = strings.Replace(s, "| 2026-01-01 |\n| T-2", "| 2026-01-01 | ann |\n| T-2", 1)
		return strings.NewReplacer("| Second task | 2026-01-01 | 2026-01-01 |", "| Second task | 2026-01-01 | 2026-01-01 |  |",
			"| Third task | 2026-01-01 | 2026-01-01 |", "| Third task | 2026-01-01 | 2026-01-01 | cy |").Replace(s)
	}
	t2 := mrow("T-2", "DONE", "", "", "Second task", "2026-01-02")
	t4 := mrow("T-4", "TODO", "", "", "Added where there is no Owner", "2026-01-02")
	mergeCase{
		base:   mergeBase,
		ours:   withOwner,
		theirs: func(s string) string { return addAfter(setRow(s, "T-2", t2), "T-3", t4) },
		want:   addAfter(setRow(withOwner(mergeBase), "T-2", t2+"  |"), "T-3", t4+"  |"),
	}.run(t)
}

func TestMergeDriverProseOnBothSides(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeByID merges prose, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	mergeCase{
		base: mergeBase,
		ours: func(s string) string {
			return addAfter(strings.Replace(s, "Prose before the table.", "Prose before the table, edited on main.", 1), "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02"))
		},
		theirs: func(s string) string {
			return addAfter(strings.Replace(s, "Kept as written.", "Kept as written, and a note from the branch.", 1), "T-3", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02"))
		},
		want: addAfter(addAfter(strings.NewReplacer("Prose before the table.", "Prose before the table, edited on main.",
			"Kept as written.", "Kept as written, and a note from the branch.").Replace(mergeBase),
			"T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")), "T-4", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02")),
	}.run(t)
}

func TestMergeDriverCRLF(t *testing.T) {
	e2etools.E2EOnly(t, "matrix.TestMergeKeepsBytes keeps line ends, TestMergeDriverNewRowsOnBothSides drives git through the driver")
	crlf := strings.ReplaceAll(mergeBase, "\n", "\r\n")
	t1 := mrow("T-1", "DONE", "go-testing", "@ann", "First task", "2026-01-02")
	mergeCase{
		base: crlf,
		ours: func(s string) string {
			return addAfter(setRow(s, "T-1", t1), "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02"))
		},
		theirs: func(s string) string {
			return addAfter(s, "T-3", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02"))
		},
		want: addAfter(addAfter(setRow(crlf, "T-1", t1), "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")),
			"T-4", mrow("T-5", "TODO", "", "", "Branch's", "2026-01-02")),
	}.run(t)
}

// A Description that goes on over several lines merges as the text it is;
// validate reports the row over several lines, as it did before the merge,
// and nothing else.
func TestMergeDriverMultiLineCells(t *testing.T) {
	multi := "| T-2 | TODO | P2 | med | coder |  |  | Second task:\n- parse\n- write | 2026-01-01 | 2026-01-01 |"
	base := setRow(mergeBase, "T-2", multi)
	theirsT2 := "| T-2 | TODO | P2 | med | coder |  |  | Second task:\n- parse\n- write\n- test | 2026-01-01 | 2026-01-04 |"
	oursT2 := strings.Replace(multi, "| TODO |", "| IN_PROGRESS |", 1)
	oursT2 = strings.Replace(oursT2, "|  |  |", "|  | @bob |", 1)
	replaceMulti := func(s, with string) string { return strings.Replace(s, multi, with, 1) }
	for _, mode := range mergeModes {
		t.Run(mode.name, func(t *testing.T) {
			r := newMergeRepo(t, base)
			r.git("checkout", "-q", "-b", "theirs")
			r.commitMatrix("theirs", replaceMulti(base, theirsT2), nil)
			r.git("checkout", "-q", "main")
			r.commitMatrix("ours", addAfter(replaceMulti(base, oursT2), "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")), nil)
			if out, err := mode.run(r); err != nil {
				t.Fatalf("git %s: %v\n%s", mode.name, err, out)
			}
			want := "| T-2 | IN_PROGRESS | P2 | med | coder |  | @bob | Second task:\n- parse\n- write\n- test | 2026-01-01 | 2026-01-04 |"
			got := r.matrix()
			if wantAll := addAfter(replaceMulti(base, want), "T-3", mrow("T-4", "TODO", "", "", "Main's", "2026-01-02")); got != wantAll {
				t.Errorf("merged:\n%s\nwant:\n%s", got, wantAll)
			}
			tk, err := matrix.FindTask([]byte(got), "T-2")
			if err != nil || tk.Status != "IN_PROGRESS" || tk.Description != "Second task:\n- parse\n- write\n- test" || tk.Updated != "2026-01-04" {
				t.Errorf("T-2 reads %+v, %v", tk, err)
			}
			out, code := r.agentinfra("validate")
			if code != 1 || strings.Count(out, ": error: ") != 1 || !strings.Contains(out, "task T-2 goes on over lines 8-11") {
				t.Errorf("validate: exit %d, want only the row over several lines:\n%s", code, out)
			}
		})
	}
}

// Prefix-number IDs collide across clones: both sides add T-4. Both rows
// are kept as a conflict; --fix=renumber gives theirs T-5 and renames its
// task folder.
func TestMergeDriverSameNewIDOnBothSides(t *testing.T) {
	e2etools.E2EOnly(t, "TestRenumberRenamesTheFolder has the same conflict through git merge and --fix=renumber")
	ours := mrow("T-4", "TODO", "", "", "Login bug", "2026-01-02")
	theirs := mrow("T-4", "TODO", "", "", "Docs", "2026-01-03")
	mergeCase{
		base:        mergeBase,
		ours:        func(s string) string { return addAfter(s, "T-3", ours) },
		theirs:      func(s string) string { return addAfter(s, "T-3", theirs) },
		oursFiles:   map[string]string{".agent/tasks/T-4_login_bug/README.md": "# T-4: Login bug\n"},
		theirsFiles: map[string]string{".agent/tasks/T-4_docs/README.md": "# T-4: Docs\n\nThe docs.\n"},
		validateSays: []string{`merge conflict (lines 10-14): task T-4 was added on both sides as two different tasks (ours: "Login bug", theirs: "Docs"); keep both with ` +
			"`agentinfra validate --fix=renumber`"},
		fix:       []string{"--fix=renumber"},
		wantFixed: addAfter(addAfter(mergeBase, "T-3", ours), "T-4", strings.Replace(theirs, "T-4", "T-5", 1)),
	}.run(t)
}

// After --fix=renumber, theirs' folder carries its new ID, heading included.
func TestRenumberRenamesTheFolder(t *testing.T) {
	r := newMergeRepo(t, mergeBase)
	r.git("checkout", "-q", "-b", "theirs")
	r.commitMatrix("theirs", addAfter(mergeBase, "T-3", mrow("T-4", "TODO", "", "", "Docs", "2026-01-03")),
		map[string]string{".agent/tasks/T-4_docs/README.md": "# T-4: Docs\n\nThe docs.\n"})
	r.git("checkout", "-q", "main")
	r.commitMatrix("ours", addAfter(mergeBase, "T-3", mrow("T-4", "TODO", "", "", "Login bug", "2026-01-02")),
		map[string]string{".agent/tasks/T-4_login_bug/README.md": "# T-4: Login bug\n"})
	if _, err := r.gitErr("merge", "theirs"); err == nil {
		t.Fatal("merged cleanly; want the conflict of T-4")
	}
	out, code := r.agentinfra("validate", "--fix=renumber")
	if code != 0 || !strings.Contains(out, "finished 1 conflict: kept both of T-4 (line 10): theirs is T-5 now, its folder .agent/tasks/T-5_docs") {
		t.Fatalf("validate --fix=renumber: %d\n%s", code, out)
	}
	if got := mustRead(t, filepath.Join(r.root, ".agent/tasks/T-5_docs/README.md")); got != "# T-5: Docs\n\nThe docs.\n" {
		t.Errorf("renamed README: %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.root, ".agent/tasks/T-4_docs")); err == nil {
		t.Error(".agent/tasks/T-4_docs is still there")
	}
	if got := mustRead(t, filepath.Join(r.root, ".agent/tasks/T-4_login_bug/README.md")); got != "# T-4: Login bug\n" {
		t.Errorf("ours' README changed: %q", got)
	}
}

// A rebase of 10 commits, each touching the matrix, onto 10 others that
// each touch it too: every row of both, T-1's Updated the latest, T-2 as
// the last replayed commit left it.
func TestMergeDriverRebaseTenOntoTen(t *testing.T) {
	e2etools.E2EOnly(t, "TestMergeDriverNewRowsOnBothSides rebases and cherry-picks through the driver")
	r := newMergeRepo(t, mergeBase)
	src := mergeBase
	r.git("checkout", "-q", "-b", "theirs")
	for i := 1; i <= 10; i++ {
		src = setRow(src, "T-2", mrow("T-2", "IN_PROGRESS", "", "", fmt.Sprintf("Second task, draft %d", i), fmt.Sprintf("2026-03-%02d", i)))
		src = setRow(src, "T-1", mrow("T-1", "TODO", "go-testing", "@ann", "First task", fmt.Sprintf("2026-03-%02d", i)))
		last := "T-3"
		if i > 1 {
			last = fmt.Sprintf("B-%d", i-1)
		}
		src = addAfter(src, last, mrow(fmt.Sprintf("B-%d", i), "TODO", "", "", fmt.Sprintf("Branch task %d", i), "2026-03-01"))
		r.commitMatrix(fmt.Sprintf("branch %d", i), src, nil)
	}
	r.git("checkout", "-q", "main")
	src = mergeBase
	for i := 1; i <= 10; i++ {
		src = setRow(src, "T-1", mrow("T-1", "TODO", "go-testing", "@ann", "First task", fmt.Sprintf("2026-02-%02d", i)))
		src = setRow(src, "T-3", fmt.Sprintf("| T-3 | TODO | P%d | easy | coder |  |  | Third task | 2026-01-01 | 2026-02-%02d |", 1+i%4, i))
		last := "T-3"
		if i > 1 {
			last = fmt.Sprintf("A-%d", i-1)
		}
		src = addAfter(src, last, mrow(fmt.Sprintf("A-%d", i), "TODO", "", "", fmt.Sprintf("Main task %d", i), "2026-02-01"))
		r.commitMatrix(fmt.Sprintf("main %d", i), src, nil)
	}
	r.git("checkout", "-q", "theirs")
	if out, err := r.gitErr("rebase", "main"); err != nil {
		t.Fatalf("git rebase: %v\n%s\n%s", err, out, r.matrix())
	}
	want := setRow(src, "T-1", mrow("T-1", "TODO", "go-testing", "@ann", "First task", "2026-03-10"))
	want = setRow(want, "T-2", mrow("T-2", "IN_PROGRESS", "", "", "Second task, draft 10", "2026-03-10"))
	last := "A-10"
	for i := 1; i <= 10; i++ {
		want = addAfter(want, last, mrow(fmt.Sprintf("B-%d", i), "TODO", "", "", fmt.Sprintf("Branch task %d", i), "2026-03-01"))
		last = fmt.Sprintf("B-%d", i)
	}
	r.checkResult(want)
	if n := strings.Count(r.git("log", "--oneline", "main..theirs"), "\n"); n != 10 {
		t.Errorf("%d commits replayed, want 10", n)
	}
}
