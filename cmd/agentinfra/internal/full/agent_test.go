package full

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/workspace"
)

// fleetCLI runs the real agentinfra binary: the fleet's runs are detached
// processes (`agent run-supervisor`), so the in-process runner does not fit.
type fleetCLI struct {
	t    *testing.T
	bin  string
	repo string
	env  []string
}

func newFleetCLI(t *testing.T) *fleetCLI {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs agents")
	}
	bin := taskBinary(t)
	tools := agentstub.Install(t, t.TempDir(), "gemini")
	repo := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(repo, 0o755)
	c := &fleetCLI{t: t, bin: bin, repo: repo, env: []string{"AGENTINFRA_TOOLS=" + tools, "STUB_MODE=ok", "HOME=" + repo}}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"}} {
		c.git(args...)
	}
	if code, _, errOut := c.run("init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	c.git("add", "-A")
	c.git("commit", "-q", "-m", "init")
	ws, err := workspace.New(repo)
	if err != nil {
		t.Fatal(err)
	}
	fleettest.StopRunsAtCleanup(t, local.New(ws, local.Options{}))
	return c
}

func (c *fleetCLI) git(args ...string) {
	c.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = c.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (c *fleetCLI) run(args ...string) (int, string, string) {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.repo
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func (c *fleetCLI) json(v any, args ...string) {
	c.t.Helper()
	code, out, errOut := c.run(append(args, "--json")...)
	if code != 0 {
		c.t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

type agentJSON struct {
	Agent struct {
		Name       string          `json:"name"`
		Status     string          `json:"status"`
		CurrentRun json.RawMessage `json:"current_run"`
		Workspace  struct{ Path, Branch string }
	} `json:"agent"`
	Message string `json:"message"`
}

func (c *fleetCLI) waitStatus(name, want string) agentJSON {
	c.t.Helper()
	var a agentJSON
	poll.EventuallyNil(c.t, func() error {
		c.json(&a, "agent", "show", name)
		if a.Agent.Status != want {
			return fmt.Errorf("agent %s never became %s (last %s)", name, want, a.Agent.Status)
		}
		return nil
	})
	return a
}

func TestCLIAgentLifecycle(t *testing.T) {
	c := newFleetCLI(t)
	// Long enough that a loaded machine still starts the second command while
	// the first run works.
	c.env = append(c.env, "STUB_SLEEP_MS=3000")
	var created agentJSON
	c.json(&created, "agent", "create", "papi", "--spec", "keep the tests green")
	if s := created.Agent.Status; s != "starting" && s != "busy" || created.Agent.Workspace.Branch != "agent/papi" {
		t.Fatalf("create: %+v", created)
	}
	// The run outlives the create command: busy is seen from another process.
	c.waitStatus("papi", "busy")
	code, _, errOut := c.run("agent", "start", "papi", "another", "task")
	if code != 4 || !strings.Contains(errOut, "busy") { // conflict
		t.Fatalf("start while busy: exit %d, %s", code, errOut)
	}
	c.waitStatus("papi", "idle")
	// A shell completes the agent's name, with its status and role.
	for _, sub := range []string{"show", "start", "stop", "history", "delete"} {
		if code, out, _ := c.run("__complete", "agent", sub, "pa"); code != 0 || !strings.HasPrefix(out, "papi\tidle, coder\n:4\n") {
			t.Errorf("__complete agent %s pa: exit %d, %q", sub, code, out)
		}
	}
	// init wrote the fleet's ignore rule: git sees none of its files.
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = c.repo
	if out, err := st.Output(); err != nil || len(out) != 0 {
		t.Fatalf("git status after a run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(c.repo, ".agent", "fleet", ".gitignore")); err != nil {
		t.Fatal(err)
	}

	var list struct {
		Agents []struct {
			Name, Status string
			CurrentRun   json.RawMessage `json:"current_run"`
		} `json:"agents"`
		TotalCount int `json:"total_count"`
	}
	c.json(&list, "agent", "list", "--status", "idle")
	if list.TotalCount != 1 || list.Agents[0].Name != "papi" || string(list.Agents[0].CurrentRun) != "null" {
		t.Fatalf("list: %+v", list)
	}
	var hist struct {
		Tasks []struct {
			Status, Summary string
		} `json:"tasks"`
		TotalCount int `json:"total_count"`
		TotalPages int `json:"total_pages"`
	}
	c.json(&hist, "agent", "history", "papi")
	if hist.TotalCount != 1 || hist.Tasks[0].Status != "completed" || hist.TotalPages != 1 {
		t.Fatalf("history: %+v", hist)
	}
	code, _, errOut = c.run("agent", "history", "papi", "--page-size", "101")
	if code != 2 || !strings.Contains(errOut, "1 to 100") {
		t.Fatalf("history --page-size 101: exit %d, %s", code, errOut)
	}
	var deleted struct {
		Message      string
		DeletedAgent struct {
			Name        string `json:"name"`
			WorkspaceID string `json:"workspace_id"`
		} `json:"deleted_agent"`
	}
	c.json(&deleted, "agent", "delete", "papi")
	if deleted.DeletedAgent.Name != "papi" || deleted.DeletedAgent.WorkspaceID == "" {
		t.Fatalf("delete: %+v", deleted)
	}
	code, _, _ = c.run("agent", "show", "papi")
	if code != 3 { // not found
		t.Fatalf("show of a deleted agent: exit %d", code)
	}
}

func TestCLIAgentUsageErrors(t *testing.T) {
	root := fixtureWS(t)
	for _, args := range [][]string{
		{"agent", "create", "bad_name", "--spec", "s"},
		{"agent", "create", "ok", "--spec", ""},
		{"agent", "start", "papi"},
		{"agent", "list", "--status", "napping"},
		{"agent", "list", "--watch"}, // not a terminal
		{"agent", "list", "--backend", "kubernetes"},
		{"role", "list", "--backend", "nomad"},
	} {
		code, _, errOut := runCLI(t, root, cliOpts{}, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	code, _, errOut := runCLI(t, root, cliOpts{}, "agent", "show", "nobody")
	if code != 3 || !strings.Contains(errOut, `no agent "nobody"`) { // not found
		t.Fatalf("show unknown: %d %s", code, errOut)
	}
	var roles struct {
		Roles []struct{ Name, DisplayName, Description string } `json:"roles"`
	}
	code, out, _ := runCLI(t, root, cliOpts{}, "role", "list", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &roles) != nil || len(roles.Roles) == 0 {
		t.Fatalf("role list: %d %s", code, out)
	}
	var projects struct {
		Projects []struct{ Name, Backend string } `json:"projects"`
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "project", "list", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &projects) != nil || len(projects.Projects) != 1 || projects.Projects[0].Backend != "local" {
		t.Fatalf("project list: %d %s", code, out)
	}
}

// A backend named in .agent/config.yaml that does not exist is refused with
// the names that do, before anything is read or written.
func TestCLIFleetBackendFromConfig(t *testing.T) {
	root := fixtureWS(t)
	cfg := filepath.Join(root, ".agent", "config.yaml")
	old, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append(old, []byte("\nfleet:\n  backend: swarm\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, root, cliOpts{}, "agent", "list")
	if code != 2 || !strings.Contains(errOut, `unknown fleet backend "swarm"`) || !strings.Contains(errOut, "local or coder") {
		t.Fatalf("agent list with fleet.backend swarm: exit %d, %s", code, errOut)
	}
	// --backend wins over the configuration.
	if code, out, errOut := runCLI(t, root, cliOpts{}, "agent", "list", "--backend", "local", "--json"); code != 0 || !strings.Contains(out, `"total_count": 0`) {
		t.Fatalf("agent list --backend local: exit %d, %s %s", code, out, errOut)
	}
}

func TestCLIAgentHelpHasExamples(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"create", "list", "show", "start", "stop", "history", "delete"} {
		code, out, _ := runCLI(t, root, cliOpts{}, "agent", c, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--json") {
			t.Errorf("agent %s --help lacks examples or --json:\n%s", c, out)
		}
	}
	for _, c := range [][]string{{"role", "list"}, {"project", "list"}} {
		code, out, _ := runCLI(t, root, cliOpts{}, append(c, "--help")...)
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%v --help lacks examples", c)
		}
	}
}

func TestCLIAgentListWatchRedrawsUntilCanceled(t *testing.T) {
	root := fixtureWS(t)
	f, out, errb := testFactory(root, cliOpts{TTY: true, Width: 100, Env: map[string]string{"NO_COLOR": "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if code := run(ctx, []string{"agent", "list", "--watch"}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if n := strings.Count(out.String(), "\x1b[H\x1b[2J"); n < 2 {
		t.Fatalf("redrew %d times in 1.5 s, want at least 2:\n%q", n, out.String())
	}
	if !strings.Contains(out.String(), "no agents") {
		t.Fatalf("output: %q", out.String())
	}
}

// A command run by an agent (AGENTINFRA_AGENT set in its runs' environment)
// records "agent" as the source of what it asks; a person's is "human".
func TestCLIAgentSourceOfATask(t *testing.T) {
	c := newFleetCLI(t)
	if code, _, errOut := c.run("agent", "create", "papi", "--spec", "keep it green"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	c.waitStatus("papi", "idle")
	c.env = append(c.env, "AGENTINFRA_AGENT=sony")
	if code, _, errOut := c.run("agent", "start", "papi", "review the retry loop"); code != 0 {
		t.Fatalf("start: %s", errOut)
	}
	c.waitStatus("papi", "idle")
	var h struct {
		Tasks []struct {
			Source string `json:"source"`
		} `json:"tasks"`
	}
	c.json(&h, "agent", "history", "papi")
	if len(h.Tasks) != 2 || h.Tasks[0].Source != "agent" || h.Tasks[1].Source != "human" {
		t.Fatalf("sources, newest first = %+v, want agent then human", h.Tasks)
	}
}

// A refused claim says its reason once (issue 19: "task X is IN_PROGRESS,
// held by @alice: task X is IN_PROGRESS, held by @alice", and the same for
// "no task is ready").
func TestCLIAgentStartRefusalSaidOnce(t *testing.T) {
	c := newFleetCLI(t)
	if code, _, errOut := c.run("task", "create", "-d", "Held", "-m", "coder"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	_, id, _ := c.run("task", "list", "--status", "TODO")
	id = strings.SplitN(id, "\t", 2)[0]
	if code, _, errOut := c.run("task", "claim", id, "--agent", "@alice"); code != 0 {
		t.Fatalf("claim: %s", errOut)
	}
	var created agentJSON
	c.json(&created, "agent", "create", "papi", "--spec", "s")
	c.waitStatus("papi", "idle")
	for _, args := range [][]string{{"agent", "start", "papi", "--task", id}, {"agent", "start", "papi", "--next"}} {
		code, _, errOut := c.run(args...)
		want := map[bool]string{true: "held by @alice", false: "no task is ready"}[len(args) == 5]
		if code != 4 || strings.Count(errOut, want) != 1 { // conflict
			t.Errorf("%v: exit %d, stderr %q; want %q said once", args, code, errOut, want)
		}
	}
}
