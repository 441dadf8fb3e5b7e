package full

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// coderCLI is a workspace and a fake Coder, with the environment that
// points agentinfra at it.
func coderCLI(t *testing.T) (string, *codertest.Server, cliOpts) {
	t.Helper()
	srv := codertest.New(t)
	return fixtureWS(t), srv, cliOpts{Env: map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}}
}

// On Coder a name has Coder's 1–32 characters: every command reaches a
// workspace whose name is longer than a local agent's 20.
func TestCLICoderNamesOfUpTo32Characters(t *testing.T) {
	root, srv, env := coderCLI(t)
	const long = "keep-the-api-tests-green-for-us1"
	run := func(args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runCLI(t, root, env, append(args, "--backend", "coder")...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out, errOut
	}
	run("agent", "create", long, "--spec", "keep the API tests green")
	srv.Settle()
	if out, _ := run("agent", "show", long); !strings.Contains(out, "Name:         "+long) || !strings.Contains(out, "idle") {
		t.Fatalf("show:\n%s", out)
	}
	run("agent", "start", long, "fix the flaky test")
	run("agent", "stop", long)
	var h struct {
		TotalCount int `json:"total_count"`
	}
	if out, _ := run("agent", "history", long, "--json"); json.Unmarshal([]byte(out), &h) != nil || h.TotalCount != 2 {
		t.Fatalf("history: %s", out)
	}
	run("agent", "delete", long)
	code, _, errOut := runCLI(t, root, env, "agent", "create", long+"x", "--spec", "s", "--backend", "coder")
	if code != 2 || !strings.Contains(errOut, "1–32") {
		t.Fatalf("a 33-character name: exit %d %s", code, errOut)
	}
}

// What the Coder backend reads of workspaces made in Coder, through the
// CLI: the spec (the prompt parameter), history summaries (the first
// message of each stretch of work), and a warning on stderr when Coder will
// not name the role.
func TestCLICoderWorkspaceMadeInCoder(t *testing.T) {
	root, srv, env := coderCLI(t)
	if _, err := srv.AddReadyWorkspace("me", "henk", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	for _, s := range [][2]string{{coder.AppStateWorking, ""}, {coder.AppStateWorking, "Starting research on Python alternatives"}, {coder.AppStateIdle, "Research complete"}} {
		if err := srv.ReportAppStatus("henk", s[0], s[1]); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, root, env, "agent", "show", "henk", "--backend", "coder")
	if code != 0 || !strings.Contains(out, "Spec:         Keep henk green\n") || !strings.Contains(out, "Role:         Operator\n") || errOut != "" {
		t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, root, env, "agent", "history", "henk", "--backend", "coder", "--json")
	var h struct {
		Tasks []struct{ Summary string } `json:"tasks"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &h) != nil || len(h.Tasks) != 1 || h.Tasks[0].Summary != "Starting research on Python alternatives" {
		t.Fatalf("history: exit %d %s %s", code, out, errOut)
	}

	srv.SetFault(codertest.RoutePresets, codertest.FaultNotFound)
	code, out, errOut = runCLI(t, root, env, "agent", "show", "henk", "--backend", "coder")
	if code != 0 || !strings.Contains(out, "Role:         \n") || !strings.HasPrefix(errOut, "warning: agent henk shows no role") || !strings.Contains(errOut, "404") {
		t.Fatalf("show with the presets 404: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, root, env, "agent", "show", "henk", "--backend", "coder", "--json")
	var shown struct {
		Agent    struct{ Role string } `json:"agent"`
		Warnings []string              `json:"warnings"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || len(shown.Warnings) != 1 || !strings.Contains(errOut, shown.Warnings[0]) {
		t.Fatalf("show --json with the presets 404: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"agent", "list"}, {"agent", "list", "--json"}} {
		code, out, errOut = runCLI(t, root, env, append(args, "--backend", "coder")...)
		if code != 0 || strings.Count(errOut, "warning: agent henk shows no role") != 1 {
			t.Fatalf("%s with the presets 404: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// A second delete while the first is under way sends nothing: it says the
// agent is already being deleted, and fails (a conflict: exit 4).
func TestCLICoderSecondDelete(t *testing.T) {
	root, srv, env := coderCLI(t)
	if code, out, errOut := runCLI(t, root, env, "agent", "create", "papi", "--spec", "s", "--backend", "coder"); code != 0 {
		t.Fatalf("create: exit %d %s%s", code, out, errOut)
	}
	srv.Settle()
	if code, out, errOut := runCLI(t, root, env, "agent", "delete", "papi", "--backend", "coder"); code != 0 {
		t.Fatalf("delete: exit %d %s%s", code, out, errOut)
	}
	builds := srv.Requests(codertest.RouteCreateBuild)
	code, _, errOut := runCLI(t, root, env, "agent", "delete", "papi", "--backend", "coder", "--json")
	if code != 4 || !strings.Contains(errOut, "already being deleted") || srv.Requests(codertest.RouteCreateBuild) != builds {
		t.Fatalf("second delete: exit %d %s (%d builds sent)", code, errOut, srv.Requests(codertest.RouteCreateBuild)-builds)
	}
}
