//go:build linux

package full

// A claude whose permission request comes in another shape (the stub's
// claude-renamed mode: "tool" for "tool_name"): doctor names the
// difference and fails with the kind unavailable; a supervised dispatch of
// it is refused before anything is claimed.

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
)

func TestDoctorAndASupervisedDispatchRefuseAClaudeThatAsksInAnotherShape(t *testing.T) {
	dir, env, _ := renamedClaude(t)

	out, stderr, err := runIn(t, dir, env, "doctor", "--json")
	if code := exitCode(err); code != 6 {
		t.Fatalf("doctor: exit %d (%v), want 6 (unavailable)\n%s\n%s", code, err, out, stderr)
	}
	var got struct {
		Findings []Finding
		OK       bool
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.OK {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	var claude *Finding
	for i, f := range got.Findings {
		if f.Check == "cli claude" {
			claude = &got.Findings[i]
		}
	}
	if claude == nil || claude.Status != DoctorFail || claude.CLI == nil || claude.CLI.Version != "2.1.330" {
		t.Fatalf("doctor's claude: %+v", claude)
	}
	// It names the step and what differs, with the message as it came.
	for _, want := range []string{"permission request", "tool_name", `"tool":"Bash"`} {
		if !strings.Contains(claude.Detail, want) {
			t.Errorf("doctor's claude does not say %q: %s", want, claude.Detail)
		}
	}

	before := matrixOf(t, dir)
	start := time.Now()
	out, stderr, err = runIn(t, dir, env, "dispatch", "a1b2c3", "--cli", "claude", "--approval-mode", "ask")
	took := time.Since(start)
	t.Logf("the supervised dispatch was refused in %v", took)
	if code := exitCode(err); code != 6 {
		t.Fatalf("dispatch: exit %d (%v), want 6 (unavailable)\n%s\n%s", code, err, out, stderr)
	}
	if !strings.Contains(stderr+out, "protocol check") || !strings.Contains(stderr+out, "agentinfra doctor") {
		t.Errorf("the refusal does not say why or what to do:\n%s%s", out, stderr)
	}
	if after := matrixOf(t, dir); after != before {
		t.Errorf("the refused dispatch changed the matrix:\n%s", after)
	}
}

// renamedClaude is a workspace with task a1b2c3, and the environment of a
// command run in it whose claude is the stub asking permission in another
// shape (claude-renamed), its cache folder the test's own.
func renamedClaude(t *testing.T) (dir string, env []string, cache string) {
	t.Helper()
	dir, _ = dispatchCLISetup(t)
	tools := agentstub.Install(t, t.TempDir(), "claude")
	fakemodel.WriteFile(t, filepath.Join(tools, "node_modules", ".bin", "claude.mode"), "claude-renamed\n")
	home := t.TempDir()
	cache = filepath.Join(home, ".cache")
	env = []string{"AGENTINFRA_ROOT=" + dir, "AGENTINFRA_TOOLS=" + tools, "AGENTINFRA_USER=ana", "HOME=" + home,
		"XDG_CACHE_HOME=" + cache, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	return dir, env, cache
}

// exitCode is the exit code of a command's error (0 when it succeeded).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
