//go:build linux

package contain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The folder of a run's own files (the system prompt, gemini's policy)
// is one the agent can read but not write: an agent in the sandbox can
// neither rewrite the policy file there nor put a file beside it, while
// the same agent may write anything in /tmp, where the files used to be.
func TestRunDirIsReadableButNotWritableByTheAgent(t *testing.T) {
	needLandlock(t)
	t.Setenv("XDG_STATE_HOME", homeDir(t))
	work := t.TempDir()
	box := Sandbox{CLI: "gemini", Workspace: work}.Env()
	dir, warning, remove, err := RunDir(work, []string{box}, false)
	if err != nil || warning != "" {
		t.Fatalf("RunDir: %q, warning %q, %v", dir, warning, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(dir, os.Getenv("XDG_STATE_HOME")) {
		t.Fatalf("the run's folder %s: %v %v", dir, fi.Mode(), err)
	}
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte("ask"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := agent(t, work, work, `
try() { label=$1; shift; if "$@" 2>/dev/null; then echo "$label ok"; else echo "$label failed"; fi; }
try read sh -c 'grep -q ask "$POL"'
try rewrite sh -c 'echo allow > "$POL"'
try replace sh -c 'echo allow > "$POL.new" && mv "$POL.new" "$POL"'
try remove sh -c 'rm -f "$POL"'
try tmp sh -c 'echo allow > /tmp/agentinfra-rundir-$$ && rm /tmp/agentinfra-rundir-$$'
`, "POL="+pol)
	want(t, out, map[string]string{"read": "ok", "rewrite": "failed", "replace": "failed", "remove": "failed", "tmp": "ok"})
	if b, _ := os.ReadFile(pol); string(b) != "ask" {
		t.Errorf("the policy became %q", b)
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("remove left %s (%v)", dir, err)
	}
}

// A state folder the agent may write (a HOME inside /tmp) is said once:
// the run goes on, warned.
func TestRunDirInAWritableFolderWarns(t *testing.T) {
	needLandlock(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	work := t.TempDir()
	dir, warning, remove, err := RunDir(work, []string{Sandbox{CLI: "claude", Workspace: work}.Env()}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if !strings.Contains(warning, dir) || !strings.Contains(warning, "XDG_STATE_HOME") {
		t.Errorf("no warning for a run folder in /tmp: %q", warning)
	}
	// Without a sandbox (a run nobody contains) there is nothing to warn of.
	_, warning, remove2, _ := RunDir(work, nil, false)
	defer remove2()
	if warning != "" {
		t.Errorf("a warning without a sandbox: %q", warning)
	}
}
