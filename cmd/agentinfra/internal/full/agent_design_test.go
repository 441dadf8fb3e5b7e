package full

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet/fleettest"
)

// TestCLIJSONIsTheMCPResult: `--json` of each fleet command prints the
// object the MCP tool answers — the same JSON, value for value, for the
// reads of an idle agent (show, list, history, roles, projects), both
// checked against the fleet design's schema; and create, start, stop and
// delete --json match their tools' schemas (issue 20).
func TestCLIJSONIsTheMCPResult(t *testing.T) {
	c := newFleetCLI(t)
	c.env = append(c.env, "STUB_SLEEP_MS=1500")
	asJSON := func(args ...string) any {
		t.Helper()
		code, out, errOut := c.run(append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return v
	}
	created := asJSON("agent", "create", "Papi", "--spec", "keep the tests green")
	fleettest.ValidateResult(t, "create_agent", created)
	c.waitStatus("Papi", "idle")

	cmd := exec.Command(c.bin, "serve")
	cmd.Dir, cmd.Env = c.repo, append(os.Environ(), c.env...)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-vs-mcp", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool := func(name string, args map[string]any) any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		json.Unmarshal(b, &v)
		return v
	}
	project := filepath.Base(c.repo)
	for _, p := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"show_agent", map[string]any{"agent_name": "Papi"}, []string{"agent", "show", "Papi"}},
		{"list_agents", map[string]any{}, []string{"agent", "list"}},
		{"show_agent_task_history", map[string]any{"agent_name": "Papi"}, []string{"agent", "history", "Papi"}},
		{"list_agent_roles", map[string]any{"project": project}, []string{"role", "list", "--project", project}},
		{"list_agent_projects", map[string]any{}, []string{"project", "list"}},
	} {
		fromCLI, fromMCP := asJSON(p.cli...), tool(p.tool, p.args)
		fleettest.ValidateResult(t, p.tool, fromCLI)
		if !reflect.DeepEqual(fromCLI, fromMCP) {
			a, _ := json.Marshal(fromCLI)
			b, _ := json.Marshal(fromMCP)
			t.Errorf("%v --json differs from %s:\ncli %s\nmcp %s", p.cli, p.tool, a, b)
		}
	}
	// The run to stop outlasts any machine's delay between start and stop
	// (1.5 s did not, at a load of 38 on 2 cores); the stop ends it.
	c.env = append(c.env, "STUB_SLEEP_MS=600000")
	started := asJSON("agent", "start", "Papi", "add a test")
	fleettest.ValidateResult(t, "start_agent_task", started)
	fleettest.ValidateResult(t, "stop_agent_task", asJSON("agent", "stop", "Papi"))
	fleettest.ValidateResult(t, "delete_agent", asJSON("agent", "delete", "Papi"))
}
