package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// The nine fleet tools on the Coder backend, end to end: the built
// `agentinfra serve` over stdio, driven by the real MCP Inspector, with
// `fleet.backend: coder` in .agent/config.yaml and the session token in
// CODER_SESSION_TOKEN, against the fake Coder. Each call is a new server
// process: what it knows of an agent is what Coder and the files say.
func TestInspectorFleetToolsOnCoder(t *testing.T) {
	ins := inspectorBin(t)
	bin := agentinfraBin(t)
	srv := codertest.New(t)
	ws := fleetWorkspace(t, 1)
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("fleet:\n  backend: coder\ncoder:\n  url: "+srv.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(serveEnv(), "AGENTINFRA_ROOT="+ws.Root, "CODER_SESSION_TOKEN="+srv.Token)
	target := []string{bin, "serve", "--toolsets", "fleet"}
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		sc, code := inspectTool(t, ins, env, target, tool, args...)
		if code != 0 {
			t.Fatalf("%s %v: error %d: %v", tool, args, code, sc["message"])
		}
		return sc
	}
	wantErr := func(code int, field, tool string, args ...string) {
		t.Helper()
		wantInspectError(t, ins, env, target, code, field, tool, args...)
	}

	if got := stringify(call("list_agent_projects")["projects"]); !strings.Contains(got, `"name":"Agents"`) || !strings.Contains(got, `"template_name":"agents"`) {
		t.Fatalf("list_agent_projects = %s", got)
	}
	if got := stringify(call("list_agent_roles", "project=Agents")["roles"]); !strings.Contains(got, `"name":"Coder"`) || !strings.Contains(got, `"name":"Operator"`) {
		t.Fatalf("list_agent_roles = %s", got)
	}
	wantErr(404, "project", "list_agent_roles", "project=nowhere")

	created := call("create_agent", "name=papi", "project=Agents", "role=Operator", "spec=keep the API tests green")
	if ag, _ := created["agent"].(map[string]any); ag["name"] != "papi" || ag["role"] != "Operator" || ag["status"] != "pending" {
		t.Fatalf("create_agent = %v", created)
	}
	wantErr(400, "name", "create_agent", "name=new", "project=Agents", "spec=s")
	wantErr(400, "role", "create_agent", "name=sony", "project=Agents", "spec=s", "role=Pilot")
	for range 3 { // built, agent connected and ready, at work on its spec
		srv.Advance()
	}
	list := call("list_agents")
	if got := stringify(list["agents"]); list["total_count"] != float64(1) || !strings.Contains(got, `"status":"busy"`) || !strings.Contains(got, `"project":"Agents"`) {
		t.Fatalf("list_agents = %v", list)
	}
	wantErr(409, "", "start_agent_task", "agent_name=papi", "task_description=and the docs")
	srv.Advance() // the spec's run is answered
	shown := call("show_agent", "agent_name=papi")
	if ag, _ := shown["agent"].(map[string]any); ag["status"] != "idle" {
		t.Fatalf("show_agent after the spec = %v", shown)
	}
	started := call("start_agent_task", "agent_name=papi", "task_description=update the changelog")
	if started["agent_status"] != "busy" && started["agent_status"] != "starting" {
		t.Fatalf("start_agent_task = %v", started)
	}
	stopped := call("stop_agent_task", "agent_name=papi")
	if task, _ := stopped["task"].(map[string]any); task["status"] != "stopped" {
		t.Fatalf("stop_agent_task = %v", stopped)
	}
	h := call("show_agent_task_history", "agent_name=papi", "page_size=1")
	if h["total_count"].(float64) < 2 || h["total_pages"].(float64) < 2 || len(h["tasks"].([]any)) != 1 {
		t.Fatalf("show_agent_task_history = %v", h)
	}
	wantErr(400, "page_size", "show_agent_task_history", "agent_name=papi", "page_size=101")
	wantErr(404, "agent_name", "show_agent", "agent_name=nobody")

	srv.SetFault(codertest.RouteWorkspaces, codertest.Fault5xx)
	wantErr(503, "", "list_agents")
	srv.SetFault(codertest.RouteWorkspaces, codertest.NoFault)

	deleted := call("delete_agent", "agent_name=papi")
	if d, _ := deleted["deleted_agent"].(map[string]any); d["name"] != "papi" || d["workspace_id"] == "" {
		t.Fatalf("delete_agent = %v", deleted)
	}
	for range 3 {
		srv.Advance()
	}
	wantErr(404, "agent_name", "show_agent", "agent_name=papi")
}
