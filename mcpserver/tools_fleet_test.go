package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

var fleetToolNames = []string{"create_agent", "list_agents", "show_agent", "show_agent_task_history", "show_agent_logs", "delete_agent",
	"start_agent_task", "stop_agent_task", "list_agent_roles", "list_agent_projects"}

// fleetWorkspace is newWorkspace with n tasks, committed in a git repository.
func fleetWorkspace(t testing.TB, n int) *workspace.Workspace {
	t.Helper()
	ws := newWorkspace(t, n)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"},
		{"config", "user.name", "T"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	fleettest.StopRunsAtCleanup(t, local.New(ws, local.Options{}))
	return ws
}

// connectFleet serves ws with the given toolsets; runs use the stub agent
// (STUB_MODE and the rest in env) under the real agentinfra supervisor.
func connectFleet(t testing.TB, ws *workspace.Workspace, toolsets []string, env ...string) *mcp.ClientSession {
	t.Helper()
	stub := agentstub.Named(t, "gemini")
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Toolsets: toolsets, Fleet: local.Options{
		SupervisorArgv: []string{agentinfraBin(t), "agent", "run-supervisor"},
		Binary:         stub, Env: env, KillGrace: 300 * time.Millisecond, StopGrace: 300 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return connectInMemory(t, srv)
}

// connectInMemory connects a client to srv over in-memory transports; all
// is closed when the test ends.
func connectInMemory(t testing.TB, srv *Server) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		srv.Close()
	})
	return cs
}

// fleetCall calls a tool and decodes its structured content (or error).
func fleetCall(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) (code int, field string) {
	t.Helper()
	res := call(t, cs, name, args)
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Field   string `json:"field"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == 0 || e.Error.Message == "" {
			t.Fatalf("%s: error without a code: %s / %s", name, b, text(res))
		}
		if !strings.HasPrefix(text(res), strings.TrimSpace(jsonInt(e.Error.Code))+": ") {
			t.Fatalf("%s: error text does not start with its code: %s", name, text(res))
		}
		return e.Error.Code, e.Error.Field
	}
	// Every result of the design's nine tools, in every test, local and
	// Coder alike, has the design's shape (issue 20).
	if slices.Contains(fleettest.DesignTools, name) {
		fleettest.ValidateResult(t, name, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
	}
	if text(res) == "" {
		t.Fatalf("%s: no text content", name)
	}
	return 0, ""
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func wantFleetError(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, code int, field string) {
	t.Helper()
	got, gotField := fleetCall(t, cs, name, args, nil)
	if got != code || (field != "" && gotField != field) {
		t.Fatalf("%s %v: code %d field %q, want %d %q", name, args, got, gotField, code, field)
	}
}

type agentOut struct {
	Agent   fleet.Agent `json:"agent"`
	Message string      `json:"message"`
}

func waitAgent(t testing.TB, cs *mcp.ClientSession, name string, want fleet.Status) fleet.Agent {
	t.Helper()
	var a agentOut
	poll.EventuallyNil(t, func() error {
		if code, _ := fleetCall(t, cs, "show_agent", map[string]any{"agent_name": name}, &a); code != 0 {
			t.Fatalf("show_agent %s: %d", name, code)
		}
		if a.Agent.Status != want {
			return fmt.Errorf("agent %s never became %s (last %s)", name, want, a.Agent.Status)
		}
		return nil
	})
	return a.Agent
}

func TestFleetToolsFitIn6KB(t *testing.T) {
	ws := newWorkspace(t, 0)
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Toolsets: []string{ToolsetFleet}})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := srv.MCP().Connect(context.Background(), st, nil)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != strings.Join(sortedCopy(fleetToolNames), ",") {
		t.Fatalf("fleet toolset = %v, want exactly the ten fleet tools", names)
	}
	b, _ := json.Marshal(res)
	t.Logf("tools/list of the fleet toolset: %d bytes", len(b))
	if len(b) > 6*1024 {
		t.Fatalf("tools/list of the ten fleet tools is %d bytes, over 6 KB", len(b))
	}
	// The matrix toolset alone has no fleet tool, and the default has both.
	for _, c := range []struct {
		sets []string
		has  string
		not  string
	}{{[]string{ToolsetMatrix}, "task", "create_agent"}, {nil, "create_agent", ""}} {
		s2, _ := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Toolsets: c.sets})
		st, ct := mcp.NewInMemoryTransports()
		ss, _ := s2.MCP().Connect(context.Background(), st, nil)
		cs, _ := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
		res, _ := cs.ListTools(context.Background(), nil)
		got := map[string]bool{}
		for _, tl := range res.Tools {
			got[tl.Name] = true
		}
		if !got[c.has] || (c.not != "" && got[c.not]) || (c.sets == nil && !got["task"]) {
			t.Errorf("toolsets %v: tools %v", c.sets, got)
		}
		cs.Close()
		ss.Close()
	}
	if _, err := New(Options{Workspace: serverWS(t, ws), Toolsets: []string{"agents"}}); err == nil {
		t.Fatal("an unknown toolset was accepted")
	}
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestFleetToolsEveryToolAndItsErrors(t *testing.T) {
	ws := fleetWorkspace(t, 1)
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("projects:\n  - name: cloud\n    backend: coder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connectFleet(t, ws, []string{ToolsetFleet}, "STUB_MODE=ok", "STUB_SLEEP_MS=1500")
	project := filepath.Base(ws.Root)

	var projects fleet.ProjectsResult
	fleetCall(t, cs, "list_agent_projects", map[string]any{}, &projects)
	if len(projects.Projects) != 2 || projects.Projects[0].Name != project {
		t.Fatalf("projects = %+v", projects)
	}
	var roles fleet.RolesResult
	fleetCall(t, cs, "list_agent_roles", map[string]any{"project": project}, &roles)
	if len(roles.Roles) == 0 || roles.Roles[0].DisplayName == "" {
		t.Fatalf("roles = %+v", roles)
	}
	wantFleetError(t, cs, "list_agent_roles", map[string]any{"project": "nowhere"}, 404, "project")
	wantFleetError(t, cs, "list_agent_roles", map[string]any{}, 400, "project")

	var created agentOut
	fleetCall(t, cs, "create_agent", map[string]any{"name": "papi", "project": project, "spec": "keep it green"}, &created)
	if created.Agent.Name != "papi" || created.Message == "" || (created.Agent.Status != fleet.StatusStarting && created.Agent.Status != fleet.StatusBusy) {
		t.Fatalf("create_agent = %+v", created)
	}
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "PAPI", "project": project, "spec": "s"}, 409, "name")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "no_way", "project": project, "spec": "s"}, 400, "name")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "sony", "project": "nowhere", "spec": "s"}, 404, "project")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "sony", "project": project, "spec": "s", "role": "pilot"}, 400, "role")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "sony", "project": project}, 400, "spec")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "sony", "project": "cloud", "spec": "s"}, 503, "")
	wantFleetError(t, cs, "create_agent", map[string]any{"name": "sony", "project": project, "spec": "s", "colour": "red"}, 400, "colour")

	waitAgent(t, cs, "papi", fleet.StatusBusy)
	wantFleetError(t, cs, "start_agent_task", map[string]any{"agent_name": "papi", "task_description": "more"}, 409, "")
	var list fleet.ListResult
	fleetCall(t, cs, "list_agents", map[string]any{"status_filter": "busy"}, &list)
	if list.TotalCount != 1 || list.Agents[0].CurrentRun == nil {
		t.Fatalf("list_agents busy = %+v", list)
	}
	wantFleetError(t, cs, "list_agents", map[string]any{"status_filter": "napping"}, 400, "status_filter")

	// stop_agent_task: the run is stopped, the agent idle.
	var stopped fleet.TaskResult
	fleetCall(t, cs, "stop_agent_task", map[string]any{"agent_name": "papi"}, &stopped)
	if stopped.Task.Status != fleet.RunStopped || stopped.AgentStatus != fleet.StatusIdle {
		t.Fatalf("stop_agent_task = %+v", stopped)
	}
	wantFleetError(t, cs, "stop_agent_task", map[string]any{"agent_name": "papi"}, 409, "")

	// start_agent_task on a matrix task.
	id := loadTasks(t, ws)[0].ID
	var started fleet.TaskResult
	fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": "papi", "task_description": "mind the tests", "task_id": id}, &started)
	if started.Task.TaskID != id || started.Message == "" {
		t.Fatalf("start_agent_task = %+v", started)
	}
	waitAgent(t, cs, "papi", fleet.StatusIdle)
	if got := loadTasks(t, ws)[0]; got.Status != "REVIEW" || !strings.Contains(strings.Join(got.Agents, " "), "@papi") {
		t.Fatalf("task after the run: %s %v", got.Status, got.Agents)
	}

	var hist fleet.HistoryPage
	fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": "papi", "page_size": 2}, &hist)
	if hist.TotalCount != 2 || hist.TotalPages != 1 || hist.Tasks[0].TaskID != id || hist.Tasks[1].Status != fleet.RunStopped {
		t.Fatalf("history = %+v", hist)
	}
	wantFleetError(t, cs, "show_agent_task_history", map[string]any{"agent_name": "papi", "page": 0}, 400, "page")
	wantFleetError(t, cs, "show_agent_task_history", map[string]any{"agent_name": "papi", "page_size": 101}, 400, "page_size")
	wantFleetError(t, cs, "show_agent_task_history", map[string]any{"agent_name": "papi", "page": "two"}, 400, "page")
	wantFleetError(t, cs, "show_agent_task_history", map[string]any{"agent_name": "ghost"}, 404, "agent_name")

	// show_agent_logs: the last run's log (the stub's events between the
	// run's start and end), a tail of it, the stopped first run.
	var logs fleet.LogsResult
	fleetCall(t, cs, "show_agent_logs", map[string]any{"agent_name": "papi"}, &logs)
	var kinds []string
	for _, it := range logs.Items {
		kinds = append(kinds, it.Kind)
	}
	if logs.Run.ID != hist.Tasks[0].ID || logs.Live || strings.Join(kinds, ",") != "run_started,init,tool_use,tool_result,message,result,run_ended" ||
		logs.Items[2].Tool != "read_file" {
		t.Fatalf("show_agent_logs = %+v", logs)
	}
	fleetCall(t, cs, "show_agent_logs", map[string]any{"agent_name": "papi", "run_id": hist.Tasks[1].ID, "tail": 1}, &logs)
	if logs.Run.Status != fleet.RunStopped || len(logs.Items) != 1 || logs.Items[0].Kind != "run_ended" || logs.TotalCount < 2 {
		t.Fatalf("show_agent_logs of the stopped run, tail 1 = %+v", logs)
	}
	wantFleetError(t, cs, "show_agent_logs", map[string]any{"agent_name": "papi", "run_id": "papi-99"}, 404, "run")
	wantFleetError(t, cs, "show_agent_logs", map[string]any{"agent_name": "papi", "tail": -1}, 400, "tail")
	wantFleetError(t, cs, "show_agent_logs", map[string]any{"agent_name": "ghost"}, 404, "agent_name")

	var deleted fleet.DeleteAgentResult
	fleetCall(t, cs, "delete_agent", map[string]any{"agent_name": "papi"}, &deleted)
	if deleted.DeletedAgent.Name != "papi" || deleted.DeletedAgent.WorkspaceID == "" || deleted.Message == "" {
		t.Fatalf("delete_agent = %+v", deleted)
	}
	wantFleetError(t, cs, "show_agent", map[string]any{"agent_name": "papi"}, 404, "agent_name")
	wantFleetError(t, cs, "delete_agent", map[string]any{"agent_name": "papi"}, 404, "agent_name")
}

// TestFleetThreeAgentsThreeTasksThroughMCP: three agents work on three
// matrix tasks at once; each task ends in REVIEW with its run recorded and
// the matrix validates.
func TestFleetThreeAgentsThreeTasksThroughMCP(t *testing.T) {
	ws := fleetWorkspace(t, 3)
	cs := connectFleet(t, ws, nil, "STUB_MODE=ok", "STUB_SLEEP_MS=300")
	project := filepath.Base(ws.Root)
	names := []string{"papi", "sony", "kiki"}
	for _, n := range names {
		fleetCall(t, cs, "create_agent", map[string]any{"name": n, "project": project, "spec": "work the matrix"}, nil)
	}
	for _, n := range names {
		waitAgent(t, cs, n, fleet.StatusIdle)
	}
	tasks := loadTasks(t, ws)
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": n, "task_description": "go", "task_id": tasks[i].ID}, nil)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("start %s on %s: code %d", names[i], tasks[i].ID, c)
		}
	}
	for _, n := range names {
		waitAgent(t, cs, n, fleet.StatusIdle)
	}
	after := loadTasks(t, ws)
	for i, task := range after {
		if task.Status != "REVIEW" || !strings.Contains(strings.Join(task.Agents, " "), "@"+names[i]) {
			t.Errorf("task %s: %s %v", task.ID, task.Status, task.Agents)
		}
		var h fleet.HistoryPage
		fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": names[i]}, &h)
		if h.Tasks[0].TaskID != task.ID || h.Tasks[0].Status != fleet.RunCompleted {
			t.Errorf("%s's last run = %+v", names[i], h.Tasks[0])
		}
	}
	b, _ := os.ReadFile(ws.MatrixPath())
	for _, d := range matrix.Validate(matrix.Parse(b), "m") {
		if d.Severity == matrix.SeverityError {
			t.Errorf("matrix: %v", d)
		}
	}
}

// Issue 18, item 6: one agent whose record does not parse no longer fails
// list_agents: the others are listed, and a warning names it.
func TestListAgentsNamesAnUnreadableRecord(t *testing.T) {
	ws := fleetWorkspace(t, 1)
	cs := connectFleet(t, ws, nil, "STUB_MODE=ok")
	project := filepath.Base(ws.Root)
	for _, name := range []string{"alpha", "bravo"} {
		if code, _ := fleetCall(t, cs, "create_agent", map[string]any{"name": name, "project": project, "spec": "s"}, nil); code != 0 {
			t.Fatalf("create_agent %s: %d", name, code)
		}
		waitAgent(t, cs, name, fleet.StatusIdle)
	}
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "fleet", "agents", "bravo", "agent.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var list fleet.ListResult
	if code, _ := fleetCall(t, cs, "list_agents", map[string]any{"include_metadata": false}, &list); code != 0 {
		t.Fatalf("list_agents failed with %d for one unreadable record", code)
	}
	if list.TotalCount != 1 || list.Agents[0].Name != "alpha" {
		t.Errorf("listed %+v, want alpha", list.Agents)
	}
	if len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "agent bravo is left out of the list") {
		t.Errorf("warnings %q, want one naming bravo", list.Warnings)
	}
}
