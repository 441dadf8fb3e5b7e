//go:build linux

package contain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// homeDir makes a folder under $HOME, which no sandbox lets an agent write
// (unlike t.TempDir(), in /tmp), removed after the test.
func homeDir(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home folder to make a folder outside the temporary ones")
	}
	d, err := os.MkdirTemp(home, ".agentinfra-sandbox-test-")
	if err != nil {
		t.Skipf("cannot make a folder in %s: %v", home, err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	return d
}

func needLandlock(t *testing.T) {
	t.Helper()
	if s := Supported(); s.ABI == 0 {
		t.Skipf("no Landlock here: %s", s.Why)
	}
}

// workspace makes a workspace at root with a supervision database and
// returns the database's path.
func workspace(t *testing.T, root string) string {
	t.Helper()
	db := filepath.Join(root, ".agent", "state", "agentinfra.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, []byte("SQLite format 3\x00the decisions"), 0o600); err != nil {
		t.Fatal(err)
	}
	return db
}

// agent runs script with sh in dir, in a sandbox for the workspace ws, and
// returns what it printed (each step prints ok or failed).
func agent(t *testing.T, dir, ws, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if err := Setup(cmd, false, append(env, Sandbox{Workspace: ws}.Env())); err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/proc/self/exe" {
		t.Fatalf("Setup did not start %s through the trampoline", cmd.Args[0])
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the agent failed: %v\n%s", err, out)
	}
	return string(out)
}

const steps = `
try() { label=$1; shift; if "$@" 2>/dev/null; then echo "$label ok"; else echo "$label failed"; fi; }
try inside sh -c 'echo work > inside.txt'
try outside sh -c 'echo escaped > "$OUTSIDE/escaped.txt"'
try outside-cleared-env env -i /bin/sh -c 'echo escaped > "$0/escaped2.txt"' "$OUTSIDE"
try outside-setsid setsid -w sh -c 'echo escaped > "$OUTSIDE/escaped3.txt"'
try read-db sh -c 'cat "$DB" >/dev/null'
try write-db sh -c 'echo forged >> "$DB"'
try new-in-state sh -c 'echo forged > "$(dirname "$DB")/new.db"'
try read-allowlist sh -c 'cat "$CONFIG/allowlist.yaml" >/dev/null'
try tmp sh -c 'echo t > "${TMPDIR:-/tmp}/agentinfra-sandbox-$$" && rm "${TMPDIR:-/tmp}/agentinfra-sandbox-$$"'
try env sh -c '! env | grep -q AGENTINFRA_SANDBOX'
`

// want checks each labelled step's result.
func want(t *testing.T, out string, results map[string]string) {
	t.Helper()
	for label, res := range results {
		if !strings.Contains(out, "\n"+label+" "+res+"\n") && !strings.HasPrefix(out, label+" "+res+"\n") {
			t.Errorf("%s: want %s; the agent printed:\n%s", label, res, out)
		}
	}
}

var confined = map[string]string{
	"inside": "ok", "tmp": "ok", "env": "ok",
	"outside": "failed", "outside-cleared-env": "failed", "outside-setsid": "failed",
	"read-db": "failed", "write-db": "failed", "new-in-state": "failed", "read-allowlist": "failed",
}

// checkUntouched fails when something outside the sandbox changed.
func checkUntouched(t *testing.T, outside, db string) {
	t.Helper()
	for _, f := range []string{"escaped.txt", "escaped2.txt", "escaped3.txt"} {
		if _, err := os.Stat(filepath.Join(outside, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written outside the sandbox (%v)", f, err)
		}
	}
	if b, _ := os.ReadFile(db); strings.Contains(string(b), "forged") {
		t.Errorf("the database was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "new.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was made in .agent/state (%v)", err)
	}
}

// The fleet's case: the agent runs in a worktree apart from the workspace.
// Writes go only to the worktree and the temporary folders, whatever the
// process did to its environment or session; the workspace's database and
// the user's config cannot be read.
func TestSandboxConfinesAnAgentInAWorktree(t *testing.T) {
	needLandlock(t)
	base := homeDir(t)
	ws, work, outside, config := filepath.Join(base, "ws"), filepath.Join(base, "work"), filepath.Join(base, "outside"), filepath.Join(base, "config")
	for _, d := range []string{work, outside, config} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(config, AllowlistFile), []byte("commands: [\"git *\"]\n"), 0o600)
	t.Setenv("AGENTINFRA_CONFIG_DIR", config)
	db := workspace(t, ws)
	out := agent(t, work, ws, steps, "OUTSIDE="+outside, "DB="+db, "CONFIG="+config)
	want(t, out, confined)
	checkUntouched(t, outside, db)
	if b, err := os.ReadFile(filepath.Join(work, "inside.txt")); err != nil || string(b) != "work\n" {
		t.Errorf("the write inside the worktree: %q, %v", b, err)
	}
}

// Dispatch's case: the agent runs in the workspace itself, which holds
// .agent/state. The agent still creates files anywhere in it, and the
// state folder is empty and read-only to it.
func TestSandboxHidesTheStateInsideTheRunsFolder(t *testing.T) {
	needLandlock(t)
	if !Supported().Mount {
		t.Skip("no mount namespace here: TestSandboxWithoutAMountNamespace covers it")
	}
	base := homeDir(t)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o755)
	config := t.TempDir() // inside /tmp, which the agent may write: hidden all the same
	os.WriteFile(filepath.Join(config, AllowlistFile), []byte("commands: [\"git *\"]\n"), 0o600)
	t.Setenv("AGENTINFRA_CONFIG_DIR", config)
	db := workspace(t, ws)
	out := agent(t, ws, ws, steps+`
try new-top-level sh -c 'mkdir newpkg && echo x > newpkg/a.go && echo y > NOTES.md'
try agent-dir sh -c 'echo x > .agent/DEVELOPMENT_MATRIX.md.tmp && mv .agent/DEVELOPMENT_MATRIX.md.tmp .agent/DEVELOPMENT_MATRIX.md'
try write-config sh -c 'echo "commands: [\"*\"]" > "$CONFIG/allowlist.yaml"'
try unmount umount "$(dirname "$DB")"
`, "OUTSIDE="+outside, "DB="+db, "CONFIG="+config)
	want(t, out, confined)
	want(t, out, map[string]string{"new-top-level": "ok", "agent-dir": "ok", "write-config": "failed", "unmount": "failed"})
	checkUntouched(t, outside, db)
	if b, _ := os.ReadFile(filepath.Join(config, AllowlistFile)); strings.Contains(string(b), `"*"`) {
		t.Errorf("the allowlist was rewritten: %q", b)
	}
}

// Without a mount namespace a hidden folder inside the run's folder is
// kept by Landlock alone: the folders on the way to it can be listed, not
// changed; everything beside them stays writable.
func TestSandboxWithoutAMountNamespace(t *testing.T) {
	needLandlock(t)
	Supported()
	saved := support.Mount
	support.Mount = false
	t.Cleanup(func() { support.Mount = saved })
	base := homeDir(t)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.MkdirAll(outside, 0o755)
	t.Setenv("AGENTINFRA_CONFIG_DIR", filepath.Join(base, "config"))
	db := workspace(t, ws)
	out := agent(t, filepath.Join(ws, "src"), ws, steps+`
try existing-folder sh -c 'mkdir -p ../src/deep && echo x > ../src/deep/a.go'
try list-root ls ..
try new-top-level sh -c 'echo y > ../NOTES.md'
`, "OUTSIDE="+outside, "DB="+db)
	want(t, out, confined)
	want(t, out, map[string]string{"existing-folder": "ok", "list-root": "ok", "new-top-level": "failed"})
	checkUntouched(t, outside, db)
}

// The trampoline runs only what Setup prepared: a process of this program
// that merely inherited the variable runs as itself.
func TestSandboxEntryWithoutAProgramIsIgnored(t *testing.T) {
	if _, child := os.LookupEnv(EnvSandbox); child {
		return // the run below: it got here, as itself
	}
	s, rest, ok := fromEnv([]string{"A=1", Sandbox{CLI: "claude", Workspace: "/w"}.Env(), "B=2"})
	if !ok || s.CLI != "claude" || s.Workspace != "/w" || strings.Join(rest, " ") != "A=1 B=2" {
		t.Fatalf("fromEnv = %+v %v %v", s, rest, ok)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxEntryWithoutAProgramIsIgnored$", "-test.v")
	cmd.Env = append(os.Environ(), Sandbox{CLI: "claude"}.Env())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the test binary with a sandbox entry and no program: %v\n%s", err, out)
	}
}

// A fleet agent's worktree is a linked one: it commits (git writes the
// shared objects, refs and its own folder in the main .git) but cannot
// write the main repository's hooks or config.
func TestSandboxLetsALinkedWorktreeCommit(t *testing.T) {
	needLandlock(t)
	base := homeDir(t)
	repo, work := filepath.Join(base, "repo"), filepath.Join(base, "agents", "papi")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(repo, 0o755)
	git(repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	git(repo, "add", "-A")
	git(repo, "commit", "-qm", "start")
	git(repo, "worktree", "add", "-q", "-b", "agent/papi", work)
	t.Setenv("AGENTINFRA_CONFIG_DIR", filepath.Join(base, "config"))
	workspace(t, repo)
	out := agent(t, work, repo, `
try() { label=$1; shift; if "$@" 2>/dev/null; then echo "$label ok"; else echo "$label failed"; fi; }
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@localhost GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@localhost
try commit sh -c 'echo b > b.txt && git add b.txt && git commit -qm "the agent" >/dev/null'
try hook sh -c 'echo "#!/bin/sh" > "$REPO/.git/hooks/post-checkout"'
try config git config --file "$REPO/.git/config" core.fsmonitor evil
`, "REPO="+repo)
	want(t, out, map[string]string{"commit": "ok", "hook": "failed", "config": "failed"})
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-checkout")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hook was written in the main repository (%v)", err)
	}
}
