package mcpserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// TestInspectorFleetParity: what the CLI can do, MCP can do (issue 20),
// through the real MCP Inspector against `agentinfra serve` over stdio:
// create_agent takes cli; start_agent_task takes a task_id without a
// description, and next; delete_agent takes force, and keeps the branch
// under an archive name so that the name can be used again. Each result
// also matches the design's schema.
func TestInspectorFleetParity(t *testing.T) {
	ins := inspectorBin(t)
	bin := agentinfraBin(t)
	ws := fleetWorkspace(t, 2)
	env := fleetServeEnv(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=400")
	// The stub answers as claude too (fleetServeEnv installs it as gemini,
	// in the tools folder its env names last: the one that counts, never the
	// shared one the test's own environment may name before it).
	tools := ""
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "AGENTINFRA_TOOLS="); ok {
			tools = dir
		}
	}
	agentstub.Install(t, tools, "claude")
	target := []string{bin, "serve"}
	project := filepath.Base(ws.Root)
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		sc, code := inspectTool(t, ins, env, target, tool, args...)
		if code != 0 {
			t.Fatalf("%s %v: error %d: %v", tool, args, code, sc["message"])
		}
		fleettest.ValidateResult(t, tool, sc)
		return sc
	}

	// create_agent {cli}
	created := call("create_agent", "name=papi", "project="+project, "spec=keep it green", "cli=claude")
	ag := created["agent"].(map[string]any)
	if ag["cli"] != "claude" {
		t.Fatalf("create_agent cli=claude made an agent with cli %v", ag["cli"])
	}
	wantInspectError(t, ins, env, target, 400, "cli", "create_agent", "name=sony", "project="+project, "spec=s", "cli=vim")
	waitFleet(t, ws, "papi", fleet.StatusIdle)

	// start_agent_task {task_id} without a description; then {next}.
	tasks := loadTasks(t, ws)
	started := call("start_agent_task", "agent_name=papi", "task_id="+tasks[0].ID)
	if tk := started["task"].(map[string]any); tk["task_id"] != tasks[0].ID {
		t.Fatalf("start_agent_task task_id=%s = %v", tasks[0].ID, started)
	}
	waitFleet(t, ws, "papi", fleet.StatusIdle)
	next := call("start_agent_task", "agent_name=papi", "next=true")
	tk := next["task"].(map[string]any)
	if tk["task_id"] == "" || tk["task_id"] == tasks[0].ID {
		t.Fatalf("start_agent_task next=true = %v (the first task is in REVIEW: the other one is next)", next)
	}
	waitFleet(t, ws, "papi", fleet.StatusIdle)
	wantInspectError(t, ins, env, target, 400, "task_description", "start_agent_task", "agent_name=papi")

	// delete_agent {force}: uncommitted changes are refused without it,
	// discarded with it; the branch is kept under an archive name.
	wt := ag["workspace"].(map[string]any)["path"].(string)
	if err := os.WriteFile(filepath.Join(wt, "scratch.txt"), []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, code := inspectTool(t, ins, env, target, "delete_agent", "agent_name=papi", "force=false"); code != 409 || e["override"] != "force" ||
		!strings.Contains(stringify(e["message"]), "pass force: true") {
		t.Fatalf("delete_agent force=false with uncommitted changes: %d %v", code, e)
	}
	del := call("delete_agent", "agent_name=papi", "force=true")
	d := del["deleted_agent"].(map[string]any)
	kept, _ := d["archived_branch"].(string)
	if !strings.HasPrefix(kept, "agent/papi-archived-") || !strings.Contains(del["message"].(string), kept) {
		t.Fatalf("delete_agent force=true = %v", del)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Errorf("the worktree %s is still there", wt)
	}
	if out, err := exec.Command("git", "-C", ws.Root, "branch", "--list", "agent/*").Output(); err != nil || strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "*")) != kept {
		t.Errorf("branches after delete: %q, %v; want only %s", out, err, kept)
	}
	// The name is free again.
	again := call("create_agent", "name=papi", "project="+project, "spec=start afresh")
	if a := again["agent"].(map[string]any); a["workspace"].(map[string]any)["branch"] != "agent/papi" {
		t.Fatalf("create_agent papi after its delete = %v", again)
	}
}
