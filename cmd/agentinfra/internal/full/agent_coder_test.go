package full

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// The fleet commands drive a Coder deployment (the fake) with --backend
// coder and CODER_URL / CODER_SESSION_TOKEN, or with fleet.backend: coder
// in .agent/config.yaml.
func TestCLIAgentsOnCoder(t *testing.T) {
	root := fixtureWS(t)
	srv := codertest.New(t)
	env := cliOpts{Env: map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}}

	code, out, errOut := runCLI(t, root, env, "agent", "create", "papi", "--spec", "keep the API tests green", "--role", "Operator", "--backend", "coder", "--json")
	var created struct {
		Agent struct{ Name, Status, Role, Project string } `json:"agent"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || created.Agent.Name != "papi" || created.Agent.Status != "pending" ||
		created.Agent.Role != "Operator" || created.Agent.Project != "Agents" {
		t.Fatalf("create: exit %d %s %s", code, out, errOut)
	}
	for range 3 { // the workspace comes up and the agent works on its spec
		srv.Advance()
	}
	lists := srv.Requests(codertest.RouteWorkspaces)
	code, out, errOut = runCLI(t, root, env, "agent", "list", "--backend", "coder", "--json")
	var list struct {
		Agents []struct {
			Name, Status, Role string
			CurrentRun         *struct{ Summary string } `json:"current_run"`
		} `json:"agents"`
		TotalCount int `json:"total_count"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.TotalCount != 1 || list.Agents[0].Status != "busy" ||
		list.Agents[0].CurrentRun == nil || list.Agents[0].CurrentRun.Summary != "keep the API tests green" {
		t.Fatalf("list: exit %d %s %s", code, out, errOut)
	}
	if n := srv.Requests(codertest.RouteWorkspaces) - lists; n != 1 {
		t.Fatalf("agent list made %d list calls", n)
	}
	code, _, errOut = runCLI(t, root, env, "agent", "start", "papi", "fix the flaky test", "--backend", "coder")
	if code == 0 || !strings.Contains(errOut, "busy") {
		t.Fatalf("start while busy: exit %d %s", code, errOut)
	}
	srv.Advance()

	// The backend from the configuration; the roles are the presets.
	cfg := filepath.Join(root, ".agent", "config.yaml")
	old, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append(old, []byte("\nfleet:\n  backend: coder\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, root, env, "agent", "show", "papi", "--json")
	if code != 0 || !strings.Contains(out, `"status": "idle"`) {
		t.Fatalf("show: exit %d %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, env, "agent", "show", "papi")
	if code != 0 || !strings.Contains(out, "Workspace:") || !strings.Contains(out, srv.URL+"/@"+srv.Owner+"/papi") || strings.Contains(out, "Branch:") {
		t.Fatalf("show (text): exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, root, env, "role", "list", "--json")
	if code != 0 || !strings.Contains(out, `"name": "Coder"`) || !strings.Contains(out, `"name": "Operator"`) {
		t.Fatalf("role list: exit %d %s", code, out)
	}
	code, out, _ = runCLI(t, root, env, "project", "list", "--json")
	if code != 0 || !strings.Contains(out, `"template_name": "agents"`) {
		t.Fatalf("project list: exit %d %s", code, out)
	}
	code, out, errOut = runCLI(t, root, env, "agent", "history", "papi", "--json")
	if code != 0 || !strings.Contains(out, `"total_count": 1`) || !strings.Contains(out, `"status": "completed"`) {
		t.Fatalf("history: exit %d %s %s", code, out, errOut)
	}
	// The workspace's Coder agent metadata: a column of agent list, a
	// field of agent show.
	if err := srv.SetAgentMetadata("papi", coder.WorkspaceAgentMetadata{
		Description: coder.WorkspaceAgentMetadataDescription{Key: "pull_request", DisplayName: "Pull request"},
		Result:      coder.WorkspaceAgentMetadataResult{Value: "812"},
	}); err != nil {
		t.Fatal(err)
	}
	tty := env
	tty.TTY = true // the table's header names the column
	code, out, errOut = runCLI(t, root, tty, "agent", "list")
	if header, row, _ := strings.Cut(out, "\n"); code != 0 || !strings.Contains(header, "PULL_REQUEST") || !strings.Contains(row, "812") {
		t.Fatalf("list with metadata: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, root, env, "agent", "show", "papi")
	if code != 0 || !strings.Contains(out, "pull_request") || !strings.Contains(out, "812") {
		t.Fatalf("show with metadata: exit %d\n%s%s", code, out, errOut)
	}
	// Without CODER_URL the backend says what to set.
	code, _, errOut = runCLI(t, root, cliOpts{}, "agent", "list")
	if code == 0 || !strings.Contains(errOut, "CODER_URL") {
		t.Fatalf("list without CODER_URL: exit %d %s", code, errOut)
	}
	// New and create are Coder's routes: a usage error.
	code, _, errOut = runCLI(t, root, env, "agent", "create", "new", "--spec", "s")
	if code != 2 || !strings.Contains(errOut, "reserved") {
		t.Fatalf("create new: exit %d %s", code, errOut)
	}
}
