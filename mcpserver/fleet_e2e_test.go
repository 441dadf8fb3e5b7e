package mcpserver

// The fleet tools end to end: the built `agentinfra serve` over stdio, driven
// by the real MCP Inspector (every tool, every error code) and by the SDK's
// client (three agents on three matrix tasks at once). Runs are the real
// supervisor (`agentinfra agent run-supervisor`) starting the stub agent installed
// as gemini in $AGENTINFRA_TOOLS.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// fleetServeEnv is the environment of a served binary whose fleet runs the
// stub agent with the STUB_* settings in stub.
func fleetServeEnv(t *testing.T, ws *workspace.Workspace, stub ...string) []string {
	tools := agentstub.Install(t, t.TempDir(), "gemini")
	env := append(serveEnv(), "AGENTINFRA_ROOT="+ws.Root, runner.EnvTools+"="+tools)
	return append(env, stub...)
}

// inspectTool calls a tool through the Inspector and returns its structured
// content and, for a tool error, its code (0 on success).
func inspectTool(t *testing.T, ins string, env []string, target []string, tool string, args ...string) (map[string]any, int) {
	t.Helper()
	cli := []string{"--method", "tools/call", "--tool-name", tool}
	if len(args) > 0 {
		cli = append(append(cli, "--tool-arg"), args...)
	}
	res := inspect(t, ins, env, target, cli...)
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] != true {
		if sc == nil {
			t.Fatalf("%s %v: no structured content: %v", tool, args, res)
		}
		return sc, 0
	}
	e, _ := sc["error"].(map[string]any)
	code, _ := e["code"].(float64)
	if code == 0 || !strings.Contains(stringify(res["content"]), stringify(int(code))+": ") {
		t.Fatalf("%s %v: an error without its code: %v", tool, args, res)
	}
	return e, int(code)
}

// wantInspectError asserts a tool error with code (and field, when given).
func wantInspectError(t *testing.T, ins string, env, target []string, code int, field, tool string, args ...string) {
	t.Helper()
	e, got := inspectTool(t, ins, env, target, tool, args...)
	if got != code || (field != "" && e["field"] != field) {
		t.Fatalf("%s %v: code %d field %v, want %d %q (%v)", tool, args, got, e["field"], code, field, e["message"])
	}
}

// waitFleet polls the fleet's files (as any reader would) until the agent
// has status want.
func waitFleet(t *testing.T, ws *workspace.Workspace, name string, want fleet.Status) fleet.Agent {
	t.Helper()
	return waitFleetWithin(t, ws, name, want, 60*time.Second)
}

func waitFleetWithin(t *testing.T, ws *workspace.Workspace, name string, want fleet.Status, within time.Duration) fleet.Agent {
	t.Helper()
	f := local.New(ws, local.Options{})
	var a fleet.Agent
	var err error
	if !poll.Until(within, func() bool {
		if a, err = f.Show(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		return a.Status == want
	}) {
		t.Fatalf("agent %s never became %s (last %s, %+v)", name, want, a.Status, a.CurrentRun)
	}
	return a
}

// TestInspectorFleetTools: every fleet tool through the real Inspector
// against `agentinfra serve` over stdio, each error code included: 400 (bad
// name, missing spec, page out of range, unknown parameter), 404 (unknown
// agent, project), 409 (name taken, busy, nothing to stop, uncommitted
// changes), 503 (a project on a backend this build does not have). Each
// call is a new server process: runs outlive it, as the MCP server is
// stateless.
func TestInspectorFleetTools(t *testing.T) {
	ins := inspectorBin(t)
	bin := agentinfraBin(t)
	ws := fleetWorkspace(t, 1)
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("projects:\n  - name: cloud\n    backend: coder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := fleetServeEnv(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=120000")
	short := fleetServeEnv(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=200")
	target := []string{bin, "serve"}
	project := filepath.Base(ws.Root)
	call := func(env []string, tool string, args ...string) map[string]any {
		t.Helper()
		sc, code := inspectTool(t, ins, env, target, tool, args...)
		if code != 0 {
			t.Fatalf("%s %v: error %d: %v", tool, args, code, sc["message"])
		}
		return sc
	}
	wantErr := func(code int, field, tool string, args ...string) {
		t.Helper()
		wantInspectError(t, ins, long, target, code, field, tool, args...)
	}

	// tools/list: exactly the ten fleet tools with --toolsets fleet.
	tl := inspect(t, ins, long, []string{bin, "serve", "--toolsets", "fleet"}, "--method", "tools/list")
	var names []string
	for _, tool := range tl["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if strings.Join(sortedCopy(names), ",") != strings.Join(sortedCopy(fleetToolNames), ",") {
		t.Fatalf("tools/list with --toolsets fleet: %v", names)
	}

	ps := call(long, "list_agent_projects")
	if got := stringify(ps["projects"]); !strings.Contains(got, `"name":"`+project+`"`) || !strings.Contains(got, `"name":"cloud"`) ||
		!strings.Contains(got, `"template_id":`) {
		t.Fatalf("list_agent_projects = %s", got)
	}
	rs := call(long, "list_agent_roles", "project="+project)
	if got := stringify(rs["roles"]); !strings.Contains(got, `"name":"coder"`) || !strings.Contains(got, `"display_name":`) {
		t.Fatalf("list_agent_roles = %s", got)
	}
	wantErr(404, "project", "list_agent_roles", "project=nowhere")

	created := call(long, "create_agent", "name=papi", "project="+project, "spec=keep it green")
	ag, _ := created["agent"].(map[string]any)
	if ag["name"] != "papi" || (ag["status"] != "starting" && ag["status"] != "busy") || created["message"] == "" {
		t.Fatalf("create_agent = %v", created)
	}
	wantErr(409, "name", "create_agent", "name=PAPI", "project="+project, "spec=s")
	wantErr(400, "name", "create_agent", "name=no_way", "project="+project, "spec=s")
	wantErr(400, "name", "create_agent", "name=-edge", "project="+project, "spec=s")
	wantErr(400, "spec", "create_agent", "name=sony", "project="+project)
	wantErr(400, "role", "create_agent", "name=sony", "project="+project, "spec=s", "role=pilot")
	wantErr(404, "project", "create_agent", "name=sony", "project=nowhere", "spec=s")
	wantErr(503, "", "create_agent", "name=sony", "project=cloud", "spec=s")
	if _, err := os.Stat(filepath.Join(ws.AgentDir(), "fleet", "agents", "sony")); err == nil {
		t.Fatal("a refused create left the agent's folder behind")
	}

	// The spec's run outlived the server process that started it.
	waitFleet(t, ws, "papi", fleet.StatusBusy)
	list := call(long, "list_agents", "status_filter=busy")
	if list["total_count"] != float64(1) || !strings.Contains(stringify(list["agents"]), `"current_run":{`) {
		t.Fatalf("list_agents busy = %v", list)
	}
	// The fleet contract's six fields, issue 10's workspace metadata, and
	// issue 20's current_run, last_task and workspace_id.
	if a := list["agents"].([]any)[0].(map[string]any); len(a) != 11 || a["metadata_count"] == nil || a["metadata"] == nil || a["current_task"] != "keep it green" {
		t.Errorf("a list_agents row has %d fields, want name,status,current_task,current_run,last_task,role,project,created_at,workspace_id,metadata_count,metadata: %v", len(a), a)
	}
	wantErr(400, "status_filter", "list_agents", "status_filter=napping")
	wantErr(404, "project_filter", "list_agents", "project_filter=nowhere")
	if l := call(long, "list_agents", "project_filter=cloud"); l["total_count"] != float64(0) {
		t.Errorf("list_agents of a project without agents = %v", l)
	}
	shown := call(long, "show_agent", "agent_name=papi")
	if a, _ := shown["agent"].(map[string]any); a["status"] != "busy" || a["spec"] != "keep it green" {
		t.Fatalf("show_agent = %v", shown)
	}
	wantErr(404, "agent_name", "show_agent", "agent_name=ghost")
	wantErr(400, "agent_name", "show_agent", "agent_name=../etc")
	wantErr(409, "", "start_agent_task", "agent_name=papi", "task_description=more")
	wantErr(404, "agent_name", "start_agent_task", "agent_name=ghost", "task_description=more")

	stopped := call(long, "stop_agent_task", "agent_name=papi")
	if tk, _ := stopped["task"].(map[string]any); tk["status"] != "stopped" || stopped["agent_status"] != "idle" {
		t.Fatalf("stop_agent_task = %v", stopped)
	}
	wantErr(409, "", "stop_agent_task", "agent_name=papi")
	wantErr(404, "agent_name", "stop_agent_task", "agent_name=ghost")

	id := loadTasks(t, ws)[0].ID
	started := call(short, "start_agent_task", "agent_name=papi", "task_description=mind the tests", "task_id="+id)
	if tk, _ := started["task"].(map[string]any); tk["task_id"] != id || started["agent_status"] == "" || started["message"] == "" {
		t.Fatalf("start_agent_task = %v", started)
	}
	waitFleet(t, ws, "papi", fleet.StatusIdle)
	wantErr(404, "task_id", "start_agent_task", "agent_name=papi", "task_description=x", "task_id=ffffff")
	if got := loadTasks(t, ws)[0]; got.Status != "REVIEW" {
		t.Fatalf("task %s after the run: %s", id, got.Status)
	}

	h := call(long, "show_agent_task_history", "agent_name=papi", "page=2", "page_size=1")
	if h["total_count"] != float64(2) || h["page"] != float64(2) || h["page_size"] != float64(1) || h["total_pages"] != float64(2) ||
		!strings.Contains(stringify(h["tasks"]), `"status":"stopped"`) {
		t.Fatalf("show_agent_task_history page 2 = %v", h)
	}
	wantErr(400, "page", "show_agent_task_history", "agent_name=papi", "page=3", "page_size=1")
	wantErr(400, "page", "show_agent_task_history", "agent_name=papi", "page=0")
	wantErr(400, "page_size", "show_agent_task_history", "agent_name=papi", "page_size=101")
	wantErr(404, "agent_name", "show_agent_task_history", "agent_name=ghost")
	wantErr(400, "colour", "show_agent_task_history", "agent_name=papi", "colour=red")

	// show_agent_logs: the last run's log, through the Inspector too.
	lg := call(long, "show_agent_logs", "agent_name=papi", "tail=2")
	if items := stringify(lg["items"]); lg["live"] != false || !strings.Contains(items, `"kind":"run_ended"`) || lg["total_count"].(float64) < 2 {
		t.Fatalf("show_agent_logs = %v", lg)
	}
	wantErr(404, "run", "show_agent_logs", "agent_name=papi", "run_id=papi-99")
	wantErr(400, "tail", "show_agent_logs", "agent_name=papi", "tail=-1")

	// delete_agent refuses uncommitted changes, then removes the worktree.
	wt := ag["workspace"].(map[string]any)["path"].(string)
	if err := os.WriteFile(filepath.Join(wt, "scratch.txt"), []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A conflict force lifts: delete_agent takes force (issue 20), so the
	// error offers it.
	if e, code := inspectTool(t, ins, long, target, "delete_agent", "agent_name=papi"); code != 409 || e["kind"] != "conflict" ||
		e["field"] != "" || e["override"] != "force" || !strings.Contains(stringify(e["message"]), "pass force: true") {
		t.Fatalf("delete_agent with uncommitted changes: %d %v", code, e)
	}
	os.Remove(filepath.Join(wt, "scratch.txt"))
	del := call(long, "delete_agent", "agent_name=papi")
	if d, _ := del["deleted_agent"].(map[string]any); d["name"] != "papi" || d["workspace_id"] != wt || del["message"] == "" {
		t.Fatalf("delete_agent = %v", del)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Errorf("the worktree %s is still there", wt)
	}
	wantErr(404, "agent_name", "delete_agent", "agent_name=papi")
	if l := call(long, "list_agents"); l["total_count"] != float64(0) {
		t.Errorf("list_agents after delete = %v", l)
	}
}

// TestServeFleetThreeAgentsThreeTasks: the end-to-end test against
// the real `agentinfra serve` process over stdio (the SDK's client): three
// agents work on three matrix tasks at once; each task ends in REVIEW with
// its run recorded, and the matrix validates.
func TestServeFleetThreeAgentsThreeTasks(t *testing.T) {
	e2etools.E2EOnly(t, "TestFleetThreeAgentsThreeTasksThroughMCP runs the same three agents in process, TestServeHTTPBinary the built server")
	bin := agentinfraBin(t)
	ws := fleetWorkspace(t, 3)
	cmd := exec.Command(bin, "serve")
	cmd.Env = fleetServeEnv(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=3000")
	cmd.Dir = t.TempDir()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
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
	codes := make([]int, len(names))
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
	// The three run at once: all busy together, each holding its task.
	poll.EventuallyNil(t, func() error {
		var l fleet.ListResult
		fleetCall(t, cs, "list_agents", map[string]any{"status_filter": "busy"}, &l)
		if l.TotalCount != 3 {
			return fmt.Errorf("the three agents were never busy at once: %+v", l)
		}
		return nil
	})
	for _, task := range loadTasks(t, ws) {
		if task.Status != "IN_PROGRESS" {
			t.Errorf("task %s is %s while its agent works", task.ID, task.Status)
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
		if h.TotalCount != 2 || h.Tasks[0].TaskID != task.ID || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[0].CompletedAt == nil {
			t.Errorf("%s's history = %+v", names[i], h)
		}
	}
	b, _ := os.ReadFile(ws.MatrixPath())
	for _, d := range matrix.Validate(matrix.Parse(b), "m") {
		if d.Severity == matrix.SeverityError {
			t.Errorf("matrix: %v", d)
		}
	}
	if out, err := exec.Command(bin, "--root", ws.Root, "validate").CombinedOutput(); err != nil {
		t.Errorf("agentinfra validate after the runs: %v\n%s", err, out)
	}
}

// TestServeFleetRealGemini: the production wiring end to end — `agentinfra
// serve` over stdio starts `agentinfra agent run-supervisor`, which finds the
// real gemini through $AGENTINFRA_TOOLS and runs it against the fake model
// server with the environment the server was given. The spec's run
// completes with its session recorded; the next task resumes it.
func TestServeFleetRealGemini(t *testing.T) {
	fake := fakemodel.NewGemini(t, 0)
	c := fakemodel.Gemini(t, fake.URL)
	bin := agentinfraBin(t)
	ws := fleetWorkspace(t, 0)
	cmd := exec.Command(bin, "serve", "--toolsets", "fleet")
	cmd.Env = append(append(serveEnv(), c.Env...), "AGENTINFRA_ROOT="+ws.Root, runner.EnvTools+"="+e2etools.Dir())
	cmd.Dir = t.TempDir()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var created agentOut
	fleetCall(t, cs, "create_agent", map[string]any{"name": "gem", "project": filepath.Base(ws.Root), "spec": "keep it green MARK-SPEC"}, &created)
	if created.Agent.CLI != "gemini" {
		t.Fatalf("create_agent = %+v", created.Agent)
	}
	waitFleetWithin(t, ws, "gem", fleet.StatusIdle, fakemodel.Timeout)
	var h fleet.HistoryPage
	fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": "gem"}, &h)
	if h.TotalCount != 1 || h.Tasks[0].Status != fleet.RunCompleted || len(h.Tasks[0].SessionID) < 8 {
		t.Fatalf("the spec's run = %+v", h.Tasks)
	}
	session := h.Tasks[0].SessionID
	fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": "gem", "task_description": "add a test MARK-NEXT"}, nil)
	waitFleetWithin(t, ws, "gem", fleet.StatusIdle, fakemodel.Timeout)
	fleetCall(t, cs, "show_agent_task_history", map[string]any{"agent_name": "gem"}, &h)
	if h.TotalCount != 2 || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[0].SessionID != session {
		t.Fatalf("the second run = %+v (session of the first: %s)", h.Tasks[0], session)
	}
	calls := fake.Requests(":streamGenerateContent")
	if len(calls) < 2 {
		t.Fatalf("the fake model saw %d calls", len(calls))
	}
	if last := string(calls[len(calls)-1].Body); !strings.Contains(last, "MARK-NEXT") || !strings.Contains(last, "MARK-SPEC") {
		t.Errorf("the second run did not resume the first's conversation")
	}
}
