package mcpserver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// dispatch_task takes the options of `agentinfra dispatch` (cli, timeout,
// approval_mode, force, dry_run) and plans exactly what the CLI plans with the
// same flags: a dry run through MCP and one through the built binary agree on
// the command, model and why, timeout and prompt size, and neither changes a
// byte.
func TestDispatchTaskDryRunMatchesCLI(t *testing.T) {
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 2)
	_, cs := connect(t, ws, nil)
	tasks := loadTasks(t, ws)
	done := tasks[1].ID
	callOK(t, cs, "task", map[string]any{"action": "update", "id": done, "status": "DONE"}, nil)
	before := treeHash(t, ws.Root)

	cases := []struct {
		name string
		args map[string]any
		argv [][]string // runs the agent's command line must hold
		plan string     // cli, approval mode, timeout
	}{
		{"gemini by default", map[string]any{"id": tasks[0].ID},
			[][]string{{"--approval-mode", "default"}}, "gemini default 30m0s"},
		{"claude", map[string]any{"id": tasks[0].ID, "cli": "claude", "approval_mode": "auto_edit", "timeout": "10m", "model": "claude-sonnet-4-5"},
			[][]string{{"--permission-mode", "acceptEdits"}, {"--model", "claude-sonnet-4-5"}}, "claude auto_edit 10m0s"},
		{"codex", map[string]any{"id": tasks[0].ID, "cli": "CODEX", "approval_mode": "yolo", "timeout": "90s"},
			[][]string{{"--dangerously-bypass-approvals-and-sandbox"}}, "codex yolo 1m30s"},
		{"a DONE task with force", map[string]any{"id": done, "force": true, "mode": "reviewer"},
			[][]string{{"--approval-mode", "default"}}, "gemini default 30m0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.args["dry_run"] = true
			var viaMCP dispatch.Outcome
			callOK(t, cs, "dispatch_task", c.args, &viaMCP)
			viaCLI := cliDryRun(t, bin, ws.Root, c.args)
			if viaMCP.Outcome != dispatch.OutcomeDryRun {
				t.Errorf("outcome = %q, want %q", viaMCP.Outcome, dispatch.OutcomeDryRun)
			}
			got := []string{viaMCP.CLI, viaMCP.Mode, viaMCP.Model, viaMCP.ModelReason, viaMCP.ApprovalMode, viaMCP.Timeout,
				strings.Join(viaMCP.Argv, " "), itoa(viaMCP.PromptBytes), viaMCP.StatusBefore}
			want := []string{viaCLI.CLI, viaCLI.Mode, viaCLI.Model, viaCLI.ModelReason, viaCLI.ApprovalMode, viaCLI.Timeout,
				strings.Join(viaCLI.Argv, " "), itoa(viaCLI.PromptBytes), viaCLI.StatusBefore}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("MCP plans %q where the CLI plans %q\nMCP: %+v\nCLI: %+v", got[i], want[i], viaMCP, viaCLI)
				}
			}
			for _, run := range c.argv {
				if !containsRun(viaMCP.Argv, run) {
					t.Errorf("argv %q lacks %q", viaMCP.Argv, run)
				}
			}
			if plan := viaMCP.CLI + " " + viaMCP.ApprovalMode + " " + viaMCP.Timeout; plan != c.plan {
				t.Errorf("plan = %s, want %s", plan, c.plan)
			}
			if viaMCP.PromptBytes == 0 || len(viaMCP.PromptParts) == 0 || viaMCP.ModelReason == "" {
				t.Errorf("the plan lacks the prompt size or the model's reason: %+v", viaMCP)
			}
		})
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("a dry run changed the workspace")
	}

	// Without force the DONE task is refused, and the message names force.
	res := call(t, cs, "dispatch_task", map[string]any{"id": done, "dry_run": true})
	if !res.IsError || !strings.HasPrefix(errMessage(t, res), "id: ") || !strings.Contains(text(res), "force: true") {
		t.Errorf("a DONE task without force: %s", text(res))
	}
}

// cliDryRun runs `agentinfra dispatch ID --dry-run --json` with the flags
// that match the MCP arguments.
func cliDryRun(t *testing.T, bin, root string, args map[string]any) dispatch.Outcome {
	t.Helper()
	argv := []string{"dispatch", args["id"].(string), "--dry-run", "--json"}
	for _, k := range []string{"cli", "approval_mode", "timeout", "model", "mode"} {
		if v, ok := args[k].(string); ok {
			argv = append(argv, "--"+strings.ReplaceAll(k, "_", "-"), v)
		}
	}
	if args["force"] == true {
		argv = append(argv, "--force")
	}
	cmd := exec.Command(bin, argv...)
	cmd.Dir = root
	cmd.Env = append(serveEnv(), "AGENTINFRA_ROOT="+root)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agentinfra %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	var o dispatch.Outcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("agentinfra %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return o
}

// containsRun reports whether want appears in argv as consecutive elements.
func containsRun(argv, want []string) bool {
	for i := 0; i+len(want) <= len(argv); i++ {
		if strings.Join(argv[i:i+len(want)], "\x00") == strings.Join(want, "\x00") {
			return true
		}
	}
	return false
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Bad dispatch options come back as errors naming the field, and nothing on
// disk changes.
func TestDispatchTaskOptionErrors(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[0].ID
	before := treeHash(t, ws.Root)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"cli": "cursor"}, `cli: "cursor" is not valid; use one of gemini, claude, codex`},
		{map[string]any{"approval_mode": "always"}, `approval_mode: "always" is not valid; use one of default, auto_edit, yolo`},
		{map[string]any{"timeout": "ten minutes"}, `timeout: "ten minutes" is not a duration`},
		{map[string]any{"timeout": "600"}, `timeout: "600" is not a duration`},
		{map[string]any{"timeout": "0s"}, "timeout: 0s is out of bounds; pass 1s to 4h0m0s"},
		{map[string]any{"timeout": "5h"}, "timeout: 5h0m0s is out of bounds"},
		{map[string]any{"timeout": 600}, "timeout: must be a string"},
		{map[string]any{"force": "yes"}, "force: must be true or false"},
	} {
		c.args["id"] = id
		res := call(t, cs, "dispatch_task", c.args)
		if !res.IsError || !strings.HasPrefix(errMessage(t, res), c.want) {
			t.Errorf("%v: got %q, want an error starting %q", c.args, text(res), c.want)
		}
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("a refused dispatch changed the workspace")
	}
}

// The options reach the agent's process: timeout kills a hanging agent (the
// task ends BLOCKED), force dispatches a DONE task, approval_mode is on the
// command line the agent got.
func TestDispatchTaskTimeoutAndForce(t *testing.T) {
	installStubGemini(t, "hang")
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("STUB_PIDFILE", pidfile)
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[0].ID

	res := call(t, cs, "dispatch_task", map[string]any{"id": id, "timeout": "1s"})
	if !res.IsError || !strings.Contains(text(res), dispatch.OutcomeTimedOut) || !strings.Contains(text(res), "BLOCKED") {
		t.Errorf("a hanging agent with timeout 1s: %s", text(res))
	}
	if st := loadTasks(t, ws)[0].Status; st != "BLOCKED" {
		t.Errorf("status after the timeout = %s, want BLOCKED", st)
	}
	if b, err := os.ReadFile(pidfile); err == nil {
		if pid := atoi(string(b)); pid > 0 {
			agentstub.WaitGone(t, pid)
		}
	}

	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "DONE"}, nil)
	t.Setenv("STUB_MODE", "ok")
	argsfile := filepath.Join(t.TempDir(), "args")
	t.Setenv("STUB_ARGSFILE", argsfile)
	var o dispatch.Outcome
	callOK(t, cs, "dispatch_task", map[string]any{"id": id, "force": true, "approval_mode": "yolo"}, &o)
	if o.Outcome != dispatch.OutcomeSuccess || o.StatusBefore != "DONE" || o.StatusAfter != "REVIEW" {
		t.Errorf("forced dispatch of a DONE task = %s, %s → %s", o.Outcome, o.StatusBefore, o.StatusAfter)
	}
	got, err := os.ReadFile(argsfile)
	if err != nil {
		t.Fatal(err)
	}
	if !containsRun(strings.Split(string(got), "\x00"), []string{"--approval-mode", "yolo"}) {
		t.Errorf("the agent ran with %q; want --approval-mode yolo", strings.ReplaceAll(string(got), "\x00", " "))
	}
}

func atoi(s string) int {
	var n int
	json.Unmarshal([]byte(strings.TrimSpace(s)), &n)
	return n
}
