package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hookRepo is a git repository with a pre-commit hook that first echoes
// "hook-ran" (so a test can tell the hook ran and printed nothing else) and
// then runs the agentinfra block installed by a freshly built binary.
type hookRepo struct {
	t    *testing.T
	root string
}

func newHookRepo(t *testing.T, matrixSrc string) *hookRepo {
	t.Helper()
	bin := taskBinary(t)
	root := newValidateWorkspace(t, matrixSrc)
	r := &hookRepo{t: t, root: root}
	r.git("init", "-q")
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "--root", root, "hook", "install").CombinedOutput(); err != nil {
		t.Fatalf("hook install: %v %s", err, out)
	}
	t.Setenv("AGENTINFRA_ROOT", "") // the hook finds the workspace from the repository
	// The hook finds this binary first on PATH.
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return r
}

func (r *hookRepo) git(args ...string) string {
	r.t.Helper()
	out, err := git(r.t, r.root, args...)
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func (r *hookRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit runs `git commit` (and so the hook) and returns its output and
// whether the commit was made.
func (r *hookRepo) commit(msg string, extra ...string) (string, bool) {
	r.t.Helper()
	out, err := git(r.t, r.root, append([]string{"commit", "-qm", msg}, extra...)...)
	return out, err == nil
}

const threeRows = validMatrix +
	"| b2c3d4 | TODO | P2 | easy | coder | | | Second task | 2026-01-03 | 2026-01-03 |\n" +
	"| c3d4e5 | DONE | P3 | hard | coder | | | Third task | 2026-01-04 | 2026-01-05 |\n"

// A new repository commits its other files while .agent/ is not committed
// yet, and when .agent/ is gitignored: the hook runs and says nothing.
func TestHookPassesQuietlyWithoutStagedMatrix(t *testing.T) {
	r := newHookRepo(t, validMatrix)
	r.write("main.go", "package main\n")
	r.git("add", "main.go")
	if out, ok := r.commit("first commit, .agent/ not added"); !ok || out != "hook-ran\n" {
		t.Fatalf("commit before .agent/ is committed: ok %v, output %q; want it made, the hook silent", ok, out)
	}

	r.write(".gitignore", ".agent/\n")
	r.write("README.md", "# project\n")
	r.git("add", "-A")
	if st := r.git("status", "--porcelain"); strings.Contains(st, ".agent") {
		t.Fatalf(".agent/ is not ignored:\n%s", st)
	}
	if out, ok := r.commit("with .agent/ gitignored"); !ok || out != "hook-ran\n" {
		t.Fatalf("commit with .agent/ gitignored: ok %v, output %q; want it made, the hook silent", ok, out)
	}

	// No .agent/ at all (the workspace was removed, the hook stayed).
	if err := os.RemoveAll(filepath.Join(r.root, ".agent")); err != nil {
		t.Fatal(err)
	}
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.git("add", "main.go")
	if out, ok := r.commit("no workspace"); !ok || out != "hook-ran\n" {
		t.Fatalf("commit without .agent/: ok %v, output %q; want it made, the hook silent", ok, out)
	}
}

// A staged matrix that is empty or has no task table would drop every task:
// refused, with the reason.
func TestHookRefusesEmptyOrTablelessMatrix(t *testing.T) {
	r := newHookRepo(t, validMatrix)
	r.git("add", "-A")
	if out, ok := r.commit("valid"); !ok {
		t.Fatalf("a valid matrix must commit:\n%s", out)
	}
	for _, c := range []struct{ name, src, want string }{
		{"empty", "", "the staged matrix is empty"},
		{"blank lines", "\n\n", "the staged matrix is empty"},
		{"no task table", "# Matrix\n\nWe moved the tasks elsewhere.\n\n| Term | Meaning |\n|---|---|\n| P1 | urgent |\n", "the staged matrix has no task table"},
	} {
		r.write(".agent/DEVELOPMENT_MATRIX.md", c.src)
		r.git("add", "-A")
		out, ok := r.commit(c.name)
		if ok {
			t.Errorf("%s: the commit was made:\n%s", c.name, out)
		}
		for _, w := range []string{c.want, "the staged matrix has errors", "--no-verify"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
	}
	if log := r.git("log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("commits made:\n%s", log)
	}
}

// Rows that HEAD has and the staged matrix lacks are a warning naming their
// IDs; the commit goes on.
func TestHookWarnsAboutRemovedRows(t *testing.T) {
	r := newHookRepo(t, threeRows)
	r.git("add", "-A")
	if out, ok := r.commit("three rows"); !ok {
		t.Fatalf("commit: %s", out)
	}
	r.write(".agent/DEVELOPMENT_MATRIX.md", strings.Replace(validMatrix, "First task", "First task, edited", 1))
	r.git("add", "-A")
	out, ok := r.commit("two rows removed")
	if !ok {
		t.Fatalf("removing rows is allowed (a warning):\n%s", out)
	}
	want := "warning: 2 rows in HEAD are not in the staged matrix: b2c3d4, c3d4e5"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// What would drop every task is refused (issue 18, item 13): every row
// deleted with the header kept, `git rm` or `git mv` of the matrix, `git rm
// -r .agent`; each names the rows and the way back, and --no-verify still
// commits on purpose.
func TestHookRefusesDroppingEveryTask(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(r *hookRepo)
		want string
	}{
		{"every row deleted, header kept", func(r *hookRepo) {
			r.write(".agent/DEVELOPMENT_MATRIX.md", strings.SplitAfter(threeRows, "|---------|---------|\n")[0])
			r.git("add", "-A")
		}, "the staged matrix has no task row, and HEAD's has 3 (a1b2c3, b2c3d4, c3d4e5)"},
		{"git rm of the matrix", func(r *hookRepo) { r.git("rm", "-q", ".agent/DEVELOPMENT_MATRIX.md") },
			"the commit deletes the matrix and its 3 rows: a1b2c3, b2c3d4, c3d4e5"},
		{"git mv of the matrix", func(r *hookRepo) { r.git("mv", ".agent/DEVELOPMENT_MATRIX.md", "OLD_MATRIX.md") },
			"the commit moves the matrix to OLD_MATRIX.md, where agentinfra does not read it, and its 3 rows"},
		{"git rm -r .agent", func(r *hookRepo) { r.git("rm", "-rq", ".agent") },
			"the commit deletes the matrix and its 3 rows: a1b2c3, b2c3d4, c3d4e5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newHookRepo(t, threeRows)
			r.git("add", "-A")
			if out, ok := r.commit("three rows"); !ok {
				t.Fatalf("commit: %s", out)
			}
			c.do(r)
			out, ok := r.commit(c.name)
			if ok {
				t.Fatalf("the commit was made:\n%s", out)
			}
			for _, w := range []string{c.want, "--no-verify"} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if out, ok := r.commit(c.name+", on purpose", "--no-verify"); !ok {
				t.Errorf("--no-verify: %s", out)
			}
		})
	}
}

// Without agentinfra the hook refuses the commit and says how to install it
// or bypass the check.
func TestHookFailsClosedWithoutBinary(t *testing.T) {
	built := taskBinary(t)
	root := newValidateWorkspace(t, validMatrix)
	r := &hookRepo{t: t, root: root}
	r.git("init", "-q")
	// Install with a copy of the binary, then remove the copy: the hook's
	// fallback path no longer exists and agentinfra is not on PATH.
	gone := filepath.Join(t.TempDir(), "agentinfra")
	copyBinary(t, built, gone)
	if out, err := exec.Command(gone, "--root", root, "hook", "install").CombinedOutput(); err != nil {
		t.Fatalf("hook install: %v %s", err, out)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	shPath, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(gitPath)+string(os.PathListSeparator)+filepath.Dir(shPath))
	if p, err := exec.LookPath("agentinfra"); err == nil {
		t.Skipf("an agentinfra is installed system-wide at %s", p)
	}
	r.write("main.go", "package main\n")
	r.git("add", "main.go")
	out, ok := r.commit("no binary")
	if ok {
		t.Fatalf("the commit was made without the check:\n%s", out)
	}
	for _, w := range []string{"agentinfra is not on PATH", "commit is refused", "go install ./cmd/agentinfra", "go build", "git commit --no-verify", "no release is published yet"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if out, ok := r.commit("bypassed", "--no-verify"); !ok {
		t.Errorf("--no-verify must bypass the hook:\n%s", out)
	}
}

// An agentinfra block from an older version (which skipped the check when the
// binary was missing, and was appended at the end) is replaced, at the top;
// the rest of the hook is kept.
func TestHookInstallUpdatesOlderBlock(t *testing.T) {
	bin := taskBinary(t)
	root := newValidateWorkspace(t, validMatrix)
	r := &hookRepo{t: t, root: root}
	r.git("init", "-q")
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	old := "#!/bin/sh\necho before\n\n" + hookBegin + "\necho 'agentinfra: not found; skipping the matrix check'\n" + hookEnd + "\necho after\n"
	if err := os.WriteFile(hook, []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"updated", "already installed in"} {
		out, err := exec.Command(bin, "--root", root, "hook", "install").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), want+" ") {
			t.Fatalf("hook install #%d: %v %q; want %q", i+1, err, out, want)
		}
	}
	got, _ := os.ReadFile(hook)
	want := "#!/bin/sh\n" + hookBlock(bin) + "echo before\n\necho after\n" // moved to the top
	if string(got) != want {
		t.Errorf("hook:\n%s\nwant:\n%s", got, want)
	}
}

func copyBinary(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
