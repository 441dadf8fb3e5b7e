package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/config"
)

// The server decodes .agent/config.yaml when it starts and never again:
// task updates, a create, a claim, a model choice and the fleet's tools
// read what it holds (config.Loads counts the file's reads; the real
// process is counted with strace in cmd/agentinfra's TestServeHoldsTheConfig).
func TestServerReadsTheConfigOnce(t *testing.T) {
	ws := newWorkspace(t, 2)
	cfg := "matrix:\n  aliases:\n    status: {WIP: IN_PROGRESS}\nmodels:\n  fast: m-fast\nfleet:\n  timeout: 10m\n"
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	id := loadTasks(t, ws)[0].ID
	before := config.Loads()
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if got := config.Loads() - before; got != 1 {
		t.Fatalf("New read the config %d times, want once", got)
	}
	cs := connectInMemory(t, srv)
	started := config.Loads()
	callOK(t, cs, "task", map[string]any{"action": "claim", "id": id, "agent": "@papi"}, nil)
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "WIP", "priority": "P1"}, nil)
	callOK(t, cs, "task", map[string]any{"action": "create", "description": "x", "mode": "coder"}, nil)
	callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
	callOK(t, cs, "select_model", map[string]any{"id": id}, nil)
	for _, tool := range []string{"list_agents", "list_agent_projects"} {
		var out map[string]any
		if code, field := fleetCall(t, cs, tool, map[string]any{}, &out); code != 0 {
			t.Fatalf("%s: %d %s", tool, code, field)
		}
	}
	if got := config.Loads() - started; got != 0 {
		t.Errorf("seven tool calls read the config %d times; the server holds it", got)
	}
}
