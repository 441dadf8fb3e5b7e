package mcpserver

import (
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// The fleet tools on Coder follow Coder: names of up to 32 characters, the
// spec and history of a workspace made in Coder, a warning when Coder will
// not name a role, and a second delete that reports the first.
func TestMCPFleetToolsFollowCoder(t *testing.T) {
	cs, srv := connectCoder(t)
	const long = "keep-the-api-tests-green-for-us1"
	var created fleet.AgentResult
	if code, field := fleetCall(t, cs, "create_agent", map[string]any{"name": long, "project": "Agents", "spec": "keep the API tests green"}, &created); code != 0 {
		t.Fatalf("create_agent %s: %d %s", long, code, field)
	}
	srv.Settle()
	var shown fleet.AgentResult
	if code, _ := fleetCall(t, cs, "show_agent", map[string]any{"agent_name": long}, &shown); code != 0 || shown.Agent.Status != fleet.StatusIdle {
		t.Fatalf("show_agent %s: %d %+v", long, code, shown.Agent)
	}
	var started fleet.TaskResult
	if code, _ := fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": long, "task_description": "fix it"}, &started); code != 0 {
		t.Fatalf("start_agent_task %s: %d", long, code)
	}
	if code, _ := fleetCall(t, cs, "stop_agent_task", map[string]any{"agent_name": long}, nil); code != 0 {
		t.Fatalf("stop_agent_task %s: %d", long, code)
	}
	var hist fleet.HistoryPage
	if code, _ := fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": long}, &hist); code != 0 || hist.TotalCount != 2 {
		t.Fatalf("history of %s: %d %+v", long, code, hist)
	}
	wantFleetError(t, cs, "show_agent", map[string]any{"agent_name": long + "x"}, fleet.CodeBadInput, "agent_name")

	// A second delete_agent while the first is under way: 409, nothing sent.
	if code, _ := fleetCall(t, cs, "delete_agent", map[string]any{"agent_name": long}, nil); code != 0 {
		t.Fatalf("delete_agent %s: %d", long, code)
	}
	builds := srv.Requests(codertest.RouteCreateBuild)
	res := call(t, cs, "delete_agent", map[string]any{"agent_name": long})
	if !res.IsError || !strings.HasPrefix(text(res), "409: ") || !strings.Contains(text(res), "already being deleted") || srv.Requests(codertest.RouteCreateBuild) != builds {
		t.Fatalf("second delete_agent: %s", text(res))
	}
	srv.Settle()
	wantFleetError(t, cs, "show_agent", map[string]any{"agent_name": long}, fleet.CodeNotFound, "agent_name")

	// A workspace made in Coder: its spec, its history's summaries.
	if _, err := srv.AddReadyWorkspace("me", "henk", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	for _, s := range [][2]string{{coder.AppStateWorking, ""}, {coder.AppStateWorking, "Starting research"}, {coder.AppStateIdle, "Research complete"}} {
		if err := srv.ReportAppStatus("henk", s[0], s[1]); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := fleetCall(t, cs, "show_agent", map[string]any{"agent_name": "henk"}, &shown); code != 0 || shown.Agent.Spec != "Keep henk green" ||
		shown.Agent.Role != "Operator" || len(shown.Warnings) != 0 {
		t.Fatalf("show_agent henk: %d %+v", code, shown)
	}
	if code, _ := fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": "henk"}, &hist); code != 0 || hist.TotalCount != 1 || hist.Tasks[0].Summary != "Starting research" {
		t.Fatalf("history of henk: %d %+v", code, hist)
	}

	// Its template version's presets answer 404: warnings, not silence.
	srv.SetFault(codertest.RoutePresets, codertest.FaultNotFound)
	if code, _ := fleetCall(t, cs, "show_agent", map[string]any{"agent_name": "henk"}, &shown); code != 0 || shown.Agent.Role != "" ||
		len(shown.Warnings) != 1 || !strings.Contains(shown.Warnings[0], "henk shows no role") {
		t.Fatalf("show_agent henk with the presets 404: %d %+v", code, shown)
	}
	var list fleet.ListResult
	if code, _ := fleetCall(t, cs, "list_agents", map[string]any{}, &list); code != 0 || len(list.Warnings) != 1 || list.Warnings[0] != shown.Warnings[0] {
		t.Fatalf("list_agents with the presets 404: %d %+v", code, list)
	}
}
