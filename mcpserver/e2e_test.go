package mcpserver

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// inspectorBin finds the MCP Inspector installed by scripts/install-tools.sh
// (@modelcontextprotocol/inspector, pinned). Without it the test skips, unless
// AGENTINFRA_E2E=1 (CI), where a missing tool fails.
func inspectorBin(t *testing.T) string { return e2etools.Bin(t, "mcp-inspector") }

// inspect runs `mcp-inspector --cli TARGET... ARGS...` and decodes its JSON output.
func inspect(t *testing.T, bin string, env []string, target []string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append(append([]string{"--cli"}, target...), args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("mcp-inspector %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, out, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("mcp-inspector %s: output is not JSON: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return m
}

// The real MCP Inspector CLI drives the built binary over stdio and over
// streamable HTTP: tools/list, tools/call task (create, list, a bad call),
// resources/read.
func TestInspectorE2E(t *testing.T) {
	ins := inspectorBin(t)
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 2)
	env := append(serveEnv(), "AGENTINFRA_ROOT="+ws.Root)

	check := func(t *testing.T, via string, target []string) {
		desc := "made by the inspector over " + via
		tl := inspect(t, ins, env, target, "--method", "tools/list")
		var names []string
		for _, tool := range tl["tools"].([]any) {
			m := tool.(map[string]any)
			names = append(names, m["name"].(string))
			if m["inputSchema"] == nil {
				t.Errorf("%s: no inputSchema seen by the inspector", m["name"])
			}
		}
		var matrixTools []any // the fleet's tools have their own budget
		for _, tool := range tl["tools"].([]any) {
			if !strings.Contains(tool.(map[string]any)["name"].(string), "agent") {
				matrixTools = append(matrixTools, tool)
			}
		}
		if b, _ := json.Marshal(map[string]any{"tools": matrixTools}); len(b) > maxToolsListBytes {
			t.Errorf("the inspector got %d bytes of matrix tools in tools/list, over %d", len(b), maxToolsListBytes)
		}
		for _, want := range []string{"task", "task_get_context", "skill", "format_prompt", "select_model", "handoff_generate", "dispatch_task"} {
			if !strings.Contains(strings.Join(names, ","), want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}

		created := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "task",
			"--tool-arg", "action=create", "description="+desc, "mode=coder", `skills=["go-testing"]`)
		sc, _ := created["structuredContent"].(map[string]any)
		task, _ := sc["task"].(map[string]any)
		if created["isError"] == true || task["description"] != desc {
			t.Fatalf("tools/call task create: %v", created)
		}
		id := task["id"].(string)

		list := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "task",
			"--tool-arg", "action=list", "query=inspector "+via, "limit=5")
		sc, _ = list["structuredContent"].(map[string]any)
		tasks, _ := sc["tasks"].([]any)
		if list["isError"] == true || len(tasks) != 1 || tasks[0].(map[string]any)["id"] != id {
			t.Errorf("tools/call task list: %v", list)
		}

		shown := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "task",
			"--tool-arg", "action=show", "id="+id)
		sc, _ = shown["structuredContent"].(map[string]any)
		if shown["isError"] == true || !strings.HasPrefix(stringify(sc["dir"]), `".agent/tasks/`+id) || sc["readme"] == nil {
			t.Errorf("tools/call task show: %v", shown)
		}
		valid := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "task", "--tool-arg", "action=validate")
		sc, _ = valid["structuredContent"].(map[string]any)
		if v, _ := sc["validation"].(map[string]any); valid["isError"] == true || v["errors"] != float64(0) || v["diagnostics"] == nil {
			t.Errorf("tools/call task validate: %v", valid)
		}
		// Arguments typed by the input schema: a boolean, an enum, a duration string.
		plan := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "dispatch_task",
			"--tool-arg", "id="+id, "dry_run=true", "cli=claude", "approval_mode=auto_edit", "timeout=10m")
		sc, _ = plan["structuredContent"].(map[string]any)
		if plan["isError"] == true || sc["outcome"] != "dry_run" || sc["cli"] != "claude" || sc["timeout"] != "10m0s" ||
			!strings.Contains(stringify(sc["argv"]), "acceptEdits") {
			t.Errorf("tools/call dispatch_task dry run: %v", plan)
		}

		bad := inspect(t, ins, env, target, "--method", "tools/call", "--tool-name", "task",
			"--tool-arg", "action=update", "id="+id, "status=SOMEDAY") // not a status, nor an alias of one
		if bad["isError"] != true || !strings.Contains(stringify(bad["content"]), "status: ") {
			t.Errorf("bad status: want isError naming the field, got %v", bad)
		}

		res := inspect(t, ins, env, target, "--method", "resources/read", "--uri", MatrixURI)
		if !strings.Contains(stringify(res["contents"]), "| "+id+" | TODO |") {
			t.Errorf("resources/read %s lacks the new row: %v", MatrixURI, res)
		}
		res = inspect(t, ins, env, target, "--method", "resources/read", "--uri", TaskURIPrefix+id)
		if !strings.Contains(stringify(res["contents"]), desc) {
			t.Errorf("resources/read task: %v", res)
		}
	}

	t.Run("stdio", func(t *testing.T) { check(t, "stdio", []string{bin, "serve"}) })
	t.Run("http", func(t *testing.T) {
		url, stop := startHTTPServe(t, bin, ws.Root)
		defer stop()
		check(t, "http", []string{url})
	})
	if n := len(loadTasks(t, ws)); n != 4 {
		t.Errorf("%d rows after two inspector creates on 2, want 4", n)
	}
}

func stringify(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
