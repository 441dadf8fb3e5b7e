package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// installOver writes hook as the repository's pre-commit hook, runs `hook
// install` with the built binary and returns its output and exit code.
func installOver(t *testing.T, r *hookRepo, hook string) (string, int) {
	t.Helper()
	p := filepath.Join(r.root, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(p, []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(taskBinary(t), "--root", r.root, "hook", "install")
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

func plainRepo(t *testing.T, src string) *hookRepo {
	t.Helper()
	bin := taskBinary(t)
	r := &hookRepo{t: t, root: newValidateWorkspace(t, src)}
	r.git("init", "-q")
	t.Setenv("AGENTINFRA_ROOT", "")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return r
}

// Item 11: `hook install` on a shell hook that ends in `exit 0` or `exec ...`
// puts the check where it runs: a commit of an invalid matrix is refused, and
// the hook's own commands still run on a valid one.
func TestHookInstallIntoHooksThatExitOrExec(t *testing.T) {
	for name, hook := range map[string]string{
		"exit 0":             "#!/bin/sh\necho own-hook-ran\nexit 0\n",
		"exec":               "#!/usr/bin/env bash\nset -e\nexec sh -c 'echo own-hook-ran'\n",
		"no #! line, exit 0": "echo own-hook-ran\nexit 0",
	} {
		t.Run(name, func(t *testing.T) {
			r := plainRepo(t, validMatrix)
			out, code := installOver(t, r, hook)
			if code != 0 || !strings.Contains(out, "added the check (at the top") {
				t.Fatalf("hook install: %d %s", code, out)
			}
			r.git("add", "-A")
			if out, ok := r.commit("valid"); !ok || !strings.Contains(out, "own-hook-ran") {
				t.Fatalf("a valid matrix: ok %v, output %q; want the commit and the hook's own output", ok, out)
			}
			r.write(".agent/DEVELOPMENT_MATRIX.md", validMatrix+"| a1b2c3 | DONE | P2 | easy | coder | | | Duplicate | 2026-01-02 | 2026-01-02 |\n")
			r.git("add", "-A")
			if out, ok := r.commit("invalid"); ok || !strings.Contains(out, "duplicate ID a1b2c3") {
				t.Errorf("an invalid matrix: ok %v, output:\n%s", ok, out)
			}
			if out, code := installOver(t, r, mustRead(t, filepath.Join(r.root, ".git", "hooks", "pre-commit"))); code != 0 || !strings.Contains(out, "already installed") {
				t.Errorf("second install: %d %s", code, out)
			}
		})
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A hook in another language cannot hold the shell block: refused (exit 1),
// the hook unchanged, with what to do instead.
func TestHookInstallRefusesAPythonHook(t *testing.T) {
	r := plainRepo(t, validMatrix)
	py := "#!/usr/bin/env python3\nimport sys\nprint('own hook')\nsys.exit(0)\n"
	out, code := installOver(t, r, py)
	if code != 1 || !strings.Contains(out, "is a python3 script") || !strings.Contains(out, "agentinfra validate --staged") || !strings.Contains(out, "nothing was changed") {
		t.Errorf("hook install over a Python hook: %d %s", code, out)
	}
	if got := mustRead(t, filepath.Join(r.root, ".git", "hooks", "pre-commit")); got != py {
		t.Errorf("the Python hook was changed:\n%s", got)
	}
}

// The pre-commit framework (the real tool, from Debian's packages): `hook
// install` refuses its hook with the .pre-commit-config.yaml to write, and
// that config — and this repository's .pre-commit-hooks.yaml, used the way
// every pre-commit hook is (repo + rev + id) — refuses an invalid matrix.
func TestPreCommitFramework(t *testing.T) {
	preCommit := e2etools.System(t, "pre-commit", "apt-get install pre-commit")
	bin := taskBinary(t)
	home := t.TempDir()
	t.Setenv("PRE_COMMIT_HOME", filepath.Join(home, "cache")) // its clones and environments
	// The framework's own hook, installed by the framework.
	r := plainRepo(t, validMatrix)
	r.write(".pre-commit-config.yaml", "repos: []\n")
	cmd := exec.Command(preCommit, "install")
	cmd.Dir = r.root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pre-commit install: %v %s", err, out)
	}
	framework := mustRead(t, filepath.Join(r.root, ".git", "hooks", "pre-commit"))
	out, code := installOver(t, r, framework)
	if code != 1 || !strings.Contains(out, "pre-commit framework's hook") || !strings.Contains(out, "entry: agentinfra validate --staged") {
		t.Errorf("hook install over pre-commit's hook: %d %s", code, out)
	}
	if got := mustRead(t, filepath.Join(r.root, ".git", "hooks", "pre-commit")); got != framework {
		t.Errorf("pre-commit's hook was changed")
	}

	// This repository as a pre-commit hook repository: a clone of the
	// source as it is, pinned to its commit.
	src := sourceRepo(t)
	rev := strings.TrimSpace(r.gitIn(src, "rev-parse", "HEAD"))
	for name, config := range map[string]string{
		".pre-commit-hooks.yaml (repo, rev, id)": "repos:\n  - repo: " + src + "\n    rev: " + rev + "\n    hooks:\n      - id: agentinfra-validate\n",
		"the README's local hook":                "repos:\n" + preCommitConfigSnippet + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			// Each case commits through the framework (seconds on 2 cores;
			// for repo + rev pre-commit builds agentinfra from source, about
			// a minute).
			e2etools.E2EOnly(t, "the framework's own hook is refused above and TestHookInstallIntoHooksThatExitOrExec commits through an installed check")
			r := plainRepo(t, validMatrix)
			r.write(".pre-commit-config.yaml", config)
			cmd := exec.Command(preCommit, "install")
			cmd.Dir = r.root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pre-commit install: %v %s", err, out)
			}
			// pre-commit builds the Go hook with the go on PATH; the module
			// cache already holds every dependency, so no network is used.
			goPath, _ := exec.LookPath("go")
			t.Setenv("GOPROXY", "off")
			if mc := goEnv(t, "GOMODCACHE"); mc != "" {
				t.Setenv("GOMODCACHE", mc)
			}
			t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+filepath.Dir(goPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
			r.git("add", "-A")
			if out, ok := r.commit("valid"); !ok {
				t.Fatalf("a valid matrix must commit:\n%s", out)
			}
			r.write(".agent/DEVELOPMENT_MATRIX.md", validMatrix+"| a1b2c3 | DONE | P2 | easy | coder | | | Duplicate | 2026-01-02 | 2026-01-02 |\n")
			r.git("add", "-A")
			out, ok := r.commit("invalid")
			if ok || !strings.Contains(out, "duplicate ID a1b2c3") || !strings.Contains(out, "agentinfra validate --staged") {
				t.Errorf("an invalid matrix through pre-commit: ok %v, output:\n%s", ok, out)
			}
			r.git("rm", "-q", "--cached", ".agent/DEVELOPMENT_MATRIX.md")
			if out, ok := r.commit("matrix removed"); ok || !strings.Contains(out, "the commit deletes the matrix") {
				t.Errorf("git rm of the matrix through pre-commit: ok %v, output:\n%s", ok, out)
			}
		})
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (r *hookRepo) gitIn(dir string, args ...string) string {
	r.t.Helper()
	out, err := git(r.t, dir, args...)
	if err != nil {
		r.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return out
}

// sourceRepo is a git repository holding this module's source as it is in
// the working tree (committed or not), committed once.
func sourceRepo(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("the source is not a git checkout: %v", err)
	}
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue // deleted in the working tree
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "source"}} {
		if out, err := git(t, dst, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dst
}
