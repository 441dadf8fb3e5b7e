package full

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// dispatchCLISetup makes a workspace and an $AGENTINFRA_TOOLS folder whose
// gemini is the dispatch package's stub agent CLI (behaviour via STUB_MODE).
func dispatchCLISetup(t *testing.T) (dir, tools string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		".agent/agents/coder.md":                  "---\ndescription: Writes code\nmodel: fast\n---\nYou are a coder.\n",
		".agent/tasks/a1b2c3_add-retry/README.md": "# Add retry\n\nRetry three times.\n",
		".agent/DEVELOPMENT_MATRIX.md": "# Matrix\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
			"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
			"| a1b2c3 | TODO | P1 | hard | coder | | | Add retry | 2026-11-20 | 2026-11-20 |\n" +
			"| d4e5f6 | DONE | P2 | med | coder | | | Done already | 2026-11-20 | 2026-11-20 |\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, agentstub.Install(t, t.TempDir(), "gemini")
}

func TestCLIDispatchDryRun(t *testing.T) {
	dir, tools := dispatchCLISetup(t)
	before := matrixOf(t, dir)
	code, out, errb := runCLI(t, dir, cliOpts{TTY: true, Width: 80, Env: map[string]string{"AGENTINFRA_TOOLS": tools}}, "dispatch", "a1b2c3", "--dry-run", "--session", "s-1", "--approval-mode", "yolo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{
		"dry run: nothing was changed", "task:    a1b2c3 (TODO)", "node_modules/.bin/gemini)",
		"model:   gemini-2.5-pro — difficulty hard → deep", "command: gemini '--prompt={prompt: ",
		"--approval-mode yolo --resume s-1", "would set: TODO → IN_PROGRESS",
		"prompt, as it would be sent:", "- Status: IN_PROGRESS\n", "- Agents: @coder\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if matrixOf(t, dir) != before {
		t.Error("dry run changed the matrix")
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent/tasks/a1b2c3_add-retry/tracking")); err == nil {
		t.Error("dry run created tracking/")
	}
}

func TestCLIDispatchRunsAndShowsProgress(t *testing.T) {
	dir, tools := dispatchCLISetup(t)
	t.Setenv("STUB_MODE", "ok")
	t.Setenv("STUB_RESPONSE", "Retry added.")
	code, out, errb := runCLI(t, dir, cliOpts{TTY: true, Width: 80, Env: map[string]string{"AGENTINFRA_TOOLS": tools}}, "dispatch", "a1b2c3", "--timeout", "1m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"dispatched a1b2c3 to gemini (model gemini-2.5-pro): success", "status:   TODO → REVIEW",
		"session:  stub-session-1", "usage:    21 input tokens, 9 output tokens, 1 tool calls",
		"tracking: .agent/tasks/a1b2c3_add-retry/tracking/20261121T140500Z_dispatch.md", "Retry added."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"· dispatch: a1b2c3: TODO → IN_PROGRESS, @coder", "· tool_use read_file", "· message: Retry added."} {
		if !strings.Contains(errb, want) {
			t.Errorf("progress lacks %q:\n%s", want, errb)
		}
	}
	if !strings.Contains(matrixOf(t, dir), "| a1b2c3 | REVIEW | P1 | hard | coder | | @coder | Add retry | 2026-11-20 | 2026-11-21 |") {
		t.Errorf("matrix row:\n%s", matrixOf(t, dir))
	}
}

func TestCLIDispatchJSONAndFailure(t *testing.T) {
	dir, tools := dispatchCLISetup(t)
	t.Setenv("STUB_MODE", "crash")
	code, out, errb := runCLI(t, dir, cliOpts{TTY: false, Width: 80, Env: map[string]string{"AGENTINFRA_TOOLS": tools}}, "dispatch", "a1b2c3", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errb)
	}
	// With --json the error is a JSON object on stderr too.
	var e struct {
		Error struct {
			Kind     string `json:"kind"`
			ExitCode int    `json:"exit_code"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(errb), &e); err != nil || e.Error.ExitCode != 1 ||
		!strings.Contains(e.Error.Message, "gemini exited with code 3") || !strings.Contains(e.Error.Message, "stub: fatal: something broke") {
		t.Errorf("stderr should be a JSON error giving the reason and the stderr tail (%v):\n%s", err, errb)
	}
	if strings.Contains(errb, "·") {
		t.Errorf("progress lines without a terminal:\n%s", errb)
	}
	var o struct {
		Outcome      string `json:"outcome"`
		StatusAfter  string `json:"status_after"`
		TrackingFile string `json:"tracking_file"`
		Argv         []string
		Env          []string
		Warnings     []string
		Result       struct {
			ExitCode int    `json:"exit_code"`
			Error    string `json:"error"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if o.Outcome != "failed" || o.StatusAfter != "BLOCKED" || o.Result.ExitCode != 3 || o.Env == nil || o.Warnings == nil {
		t.Errorf("json outcome %+v", o)
	}
	note, err := os.ReadFile(filepath.Join(dir, o.TrackingFile))
	if err != nil || !strings.Contains(string(note), "- Reason: gemini exited with code 3") {
		t.Errorf("tracking note (%v):\n%s", err, note)
	}
}

func TestCLIDispatchRefusalsAndUsage(t *testing.T) {
	dir, tools := dispatchCLISetup(t)
	before := matrixOf(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"d4e5f6"}, 5, "task d4e5f6 is DONE; pass --force"}, // refused
		{[]string{"a1b2c3", "--cli", "cursor"}, 2, "use one of gemini, claude, codex"},
		{[]string{"a1b2c3", "--approval-mode", "always"}, 2, "use one of default, auto_edit, yolo"},
		{[]string{"a1b2c3", "--timeout", "0s"}, 2, "--timeout must be positive"},
		{[]string{"zzzzzz"}, 3, "no task"}, // not found
		{[]string{}, 2, "accepts 1 arg"},
	} {
		code, _, errb := runCLI(t, dir, cliOpts{TTY: false, Width: 80, Env: map[string]string{"AGENTINFRA_TOOLS": tools}}, append([]string{"dispatch"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errb, tc.want) {
			t.Errorf("%v: exit %d stderr %q; want exit %d and %q", tc.args, code, errb, tc.code, tc.want)
		}
	}
	if matrixOf(t, dir) != before {
		t.Error("a refused dispatch changed the matrix")
	}
}

// TestCLIDispatchCtrlC runs the real binary, interrupts it like Ctrl-C while
// the agent hangs, and checks that the agent's process group is gone and the
// cancellation is recorded (row BLOCKED, outcome canceled).
func TestCLIDispatchCtrlC(t *testing.T) {
	bin := taskBinary(t)
	dir, tools := dispatchCLISetup(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(bin, "dispatch", "a1b2c3", "--json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTINFRA_TOOLS="+tools, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile, "AGENTINFRA_ROOT=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	grandchild := agentstub.ReadPid(t, pidFile)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v; stderr %s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "gemini was canceled; its process group was killed") {
		t.Errorf("stderr: %s", errb.String())
	}
	if !poll.Until(5*time.Second, func() bool { return agentstub.ProcessGone(grandchild) }) {
		syscall.Kill(grandchild, syscall.SIGKILL)
		t.Fatalf("the agent's child %d survived Ctrl-C", grandchild)
	}
	var o struct {
		Outcome, StatusAfter string
	}
	json.Unmarshal(out.Bytes(), &o)
	if o.Outcome != "canceled" || !strings.Contains(matrixOf(t, dir), "| a1b2c3 | BLOCKED |") {
		t.Errorf("outcome %q, matrix:\n%s", o.Outcome, matrixOf(t, dir))
	}
}

// A task whose Mode names no file (people write `code`, `agent`) is still
// dispatched: the prompt goes without a mode prompt, with a warning.
func TestCLIDispatchUnknownModeWarns(t *testing.T) {
	dir, tools := dispatchCLISetup(t)
	p := filepath.Join(dir, ".agent/DEVELOPMENT_MATRIX.md")
	src := strings.Replace(readText(t, p), "| a1b2c3 | TODO | P1 | hard | coder |", "| a1b2c3 | TODO | P1 | hard | code |", 1)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := runCLI(t, dir, cliOpts{TTY: false, Width: 80, Env: map[string]string{"AGENTINFRA_TOOLS": tools}}, "dispatch", "a1b2c3", "--dry-run")
	want := `warning: mode "code" of task a1b2c3 has no .agent/agents/code.md; the prompt goes on without a mode prompt (existing modes: coder)`
	if code != 0 || !strings.Contains(errb, want) || !strings.Contains(out, "would set: TODO → IN_PROGRESS") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errb, out)
	}
	if matrixOf(t, dir) != src {
		t.Error("dry run changed the matrix")
	}
}
