package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// connectCoder serves a workspace whose .agent/config.yaml chooses the
// coder backend, pointed at the fake Coder with a token file.
func connectCoder(t *testing.T) (*mcp.ClientSession, *codertest.Server) {
	t.Helper()
	srv := codertest.New(t)
	ws := newWorkspace(t, 3)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(srv.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ws.AgentDir(), "config.yaml")
	old, _ := os.ReadFile(cfg)
	add := "\nfleet:\n  backend: coder\ncoder:\n  url: " + srv.URL + "\n  token_file: " + tok + "\n"
	if err := os.WriteFile(cfg, append(old, add...), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if strings.HasPrefix(k, "CODER_") {
			return "" // the configuration, not the environment
		}
		return testGetenv(k)
	}
	s, err := New(Options{Workspace: serverWS(t, ws), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	return connectInMemory(t, s), srv
}

func TestMCPFleetToolsOnCoder(t *testing.T) {
	cs, srv := connectCoder(t)
	var created fleet.AgentResult
	if code, field := fleetCall(t, cs, "create_agent", map[string]any{"name": "papi", "project": "Agents", "role": "Operator", "spec": "keep the API tests green"}, &created); code != 0 {
		t.Fatalf("create_agent: %d %s", code, field)
	}
	if created.Agent.Status != fleet.StatusPending || created.Agent.Role != "Operator" {
		t.Fatalf("created %+v", created.Agent)
	}
	for range 3 {
		srv.Advance()
	}
	var list fleet.ListResult
	if code, _ := fleetCall(t, cs, "list_agents", map[string]any{}, &list); code != 0 || list.TotalCount != 1 || list.Agents[0].Status != fleet.StatusBusy {
		t.Fatalf("list_agents: %d %+v", code, list)
	}
	var shown fleet.AgentResult
	if code, _ := fleetCall(t, cs, "show_agent", map[string]any{"agent_name": "papi"}, &shown); code != 0 || shown.Agent.Status != fleet.StatusBusy ||
		shown.Agent.CurrentRun == nil || shown.Agent.CurrentRun.Summary != "keep the API tests green" {
		t.Fatalf("show_agent: %d %+v", code, shown)
	}
	wantFleetError(t, cs, "start_agent_task", map[string]any{"agent_name": "papi", "task_description": "fix it"}, fleet.CodeConflict, "")
	srv.Advance()
	var started fleet.TaskResult
	if code, _ := fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": "papi", "task_description": "fix it"}, &started); code != 0 ||
		started.AgentStatus != fleet.StatusBusy || started.Task.Summary != "fix it" {
		t.Fatalf("start_agent_task: %d %+v", code, started)
	}
	var stopped fleet.TaskResult
	if code, _ := fleetCall(t, cs, "stop_agent_task", map[string]any{"agent_name": "papi"}, &stopped); code != 0 ||
		stopped.Task.Status != fleet.RunStopped || stopped.AgentStatus != fleet.StatusIdle {
		t.Fatalf("stop_agent_task: %d %+v", code, stopped)
	}
	var hist fleet.HistoryPage
	if code, _ := fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": "papi", "page_size": 1}, &hist); code != 0 ||
		hist.TotalCount != 2 || hist.TotalPages != 2 || hist.Tasks[0].Status != fleet.RunStopped {
		t.Fatalf("history: %d %+v", code, hist)
	}
	var roles fleet.RolesResult
	if code, _ := fleetCall(t, cs, "list_agent_roles", map[string]any{"project": "Agents"}, &roles); code != 0 || len(roles.Roles) != 2 || roles.Roles[0].Name != "Coder" {
		t.Fatalf("roles: %d %+v", code, roles)
	}
	var projects fleet.ProjectsResult
	if code, _ := fleetCall(t, cs, "list_agent_projects", map[string]any{}, &projects); code != 0 || len(projects.Projects) != 1 ||
		projects.Projects[0].TemplateName != "agents" || projects.Projects[0].TemplateID == "" {
		t.Fatalf("projects: %d %+v", code, projects)
	}
	wantFleetError(t, cs, "show_agent", map[string]any{"agent_name": "nobody"}, fleet.CodeNotFound, "agent_name")
	// The Coder backend keeps no run logs: a 503 that says where they are.
	wantFleetError(t, cs, "show_agent_logs", map[string]any{"agent_name": "papi"}, fleet.CodeUnavailable, "")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "new", "project": "Agents", "spec": "s"}, fleet.CodeBadInput, "name")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "papi", "project": "Agents", "spec": "s"}, fleet.CodeConflict, "name")

	// Coder failing: 503, naming the URL.
	srv.SetFault(codertest.RouteWorkspaces, codertest.Fault5xx)
	res := call(t, cs, "list_agents", map[string]any{})
	if !res.IsError || !strings.HasPrefix(text(res), "503: ") || !strings.Contains(text(res), srv.URL) {
		t.Fatalf("list_agents while Coder fails: %s", text(res))
	}
	srv.SetFault(codertest.RouteWorkspaces, codertest.NoFault)

	var deleted fleet.DeleteAgentResult
	if code, _ := fleetCall(t, cs, "delete_agent", map[string]any{"agent_name": "papi"}, &deleted); code != 0 || deleted.DeletedAgent.Name != "papi" || deleted.DeletedAgent.WorkspaceID == "" {
		t.Fatalf("delete_agent: %d %+v", code, deleted)
	}
	srv.Settle()
	wantFleetError(t, cs, "show_agent", map[string]any{"agent_name": "papi"}, fleet.CodeNotFound, "agent_name")
}
