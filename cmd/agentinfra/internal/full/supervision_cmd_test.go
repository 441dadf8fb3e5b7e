package full

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// supervisedWorkspace is a workspace whose store holds an active claude
// session of ana's with a pending request to run `touch ok.txt`.
func supervisedWorkspace(t *testing.T) (dir string, reqID, sesID int64) {
	t.Helper()
	dir = t.TempDir()
	if _, err := task.Init(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	reqID, sesID = seedSupervision(t, dir)
	return dir, reqID, sesID
}

// seedSupervision gives the workspace dir's store an active claude session
// of ana's with a pending request to run `touch ok.txt`.
func seedSupervision(t *testing.T, dir string) (reqID, sesID int64) {
	t.Helper()
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	ses, _ := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "claude", Agent: "papi", TaskID: "a1b2c3"})
	st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	r, err := st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "touch ok.txt",
		Title: "Run touch ok.txt", Risk: store.RiskLow, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID, ses.ID
}

var ana = cliOpts{Env: map[string]string{"AGENTINFRA_USER": "ana"}}

func TestInboxApproveReject(t *testing.T) {
	dir, id, sid := supervisedWorkspace(t)
	code, out, errs := runCLI(t, dir, ana, "inbox")
	if code != 0 || !strings.Contains(out, "Run touch ok.txt") || !strings.Contains(out, "papi (claude) a1b2c3") {
		t.Fatalf("inbox: %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, dir, ana, "inbox", "--json")
	var pending []store.PendingView
	if code != 0 || json.Unmarshal([]byte(out), &pending) != nil || len(pending) != 1 || pending[0].ID != id {
		t.Fatalf("inbox --json: %s", out)
	}
	if code, out, _ = runCLI(t, dir, ana, "inbox", "show", "1"); code != 0 || !strings.Contains(out, "Command:  touch ok.txt") || !strings.Contains(out, "agentinfra approve 1") {
		t.Fatalf("inbox show: %s", out)
	}
	// Someone who is neither the owner nor an operator.
	if code, _, errs = runCLI(t, dir, cliOpts{Env: map[string]string{"AGENTINFRA_USER": "mallory"}}, "approve", "1"); code != 7 || !strings.Contains(errs, "only the session's owner @ana") {
		t.Fatalf("a stranger's approve: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, dir, ana, "reject", "1"); code != 2 || !strings.Contains(errs, "--reason") {
		t.Fatalf("reject without a reason: %d %s", code, errs)
	}
	if code, out, errs = runCLI(t, dir, ana, "approve", "1"); code != 0 || out != "Request 1 approved by @ana.\n" {
		t.Fatalf("approve: %d %q %s", code, out, errs)
	}
	// A decided request no longer expires (issue 30: it still said "Expires: in 59m56s").
	if code, out, _ = runCLI(t, dir, ana, "inbox", "show", "1"); code != 0 || strings.Contains(out, "Expires:") || !strings.Contains(out, "Decided:  approved via terminal by @ana") {
		t.Fatalf("inbox show of a decided request: %s", out)
	}
	code, _, errs = runCLI(t, dir, ana, "reject", "1", "--reason", "too late")
	if code != 4 || !strings.Contains(errs, "already approved via terminal by @ana at ") {
		t.Fatalf("a second decision: %d %s", code, errs)
	}
	if code, out, _ = runCLI(t, dir, ana, "session", "show", "1"); code != 0 || !strings.Contains(out, "request_approved") {
		t.Fatalf("session show: %s", out)
	}
	if code, out, _ = runCLI(t, dir, ana, "session", "pause", "1"); code != 0 || out != "Session 1 is paused.\n" {
		t.Fatalf("pause: %s", out)
	}
	if code, out, _ = runCLI(t, dir, ana, "session", "list"); code != 0 || !strings.Contains(out, "paused") || !strings.Contains(out, "1 live of max_concurrent_sessions 3") {
		t.Fatalf("session list: %s", out)
	}
	if code, out, _ = runCLI(t, dir, ana, "session", "stop", "1", "--reason", "enough"); code != 0 || !strings.Contains(out, "terminated") {
		t.Fatalf("stop: %s", out)
	}
	_ = sid
	// The state is git-ignored inside the workspace.
	if b, err := os.ReadFile(filepath.Join(dir, ".agent", "state", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf("state .gitignore: %q %v", b, err)
	}
}

func TestApproveAlwaysAddsARuleShownAsADiff(t *testing.T) {
	dir, _, _ := supervisedWorkspace(t)
	policyPath := filepath.Join(dir, ".agent", "policy.yaml")
	os.WriteFile(policyPath, []byte("# ours\nauto_approve:\n  commands:\n    - \"git status\"\n"), 0o644)
	// Not confirmed: nothing changes.
	code, _, errs := runCLI(t, dir, cliOpts{Env: ana.Env, Stdin: "n\n"}, "approve", "1", "--always")
	if code != 5 || !strings.Contains(errs, "+    - \"touch ok.txt\"") || !strings.Contains(errs, "nothing changed: the rule was not confirmed; pass --yes to do it anyway") {
		t.Fatalf("unconfirmed: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(policyPath); strings.Contains(string(b), "touch") {
		t.Fatal("an unconfirmed rule was written")
	}
	code, out, errs := runCLI(t, dir, cliOpts{Env: ana.Env, Stdin: "y\n"}, "approve", "1", "--always")
	if code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("confirmed: %d %s %s", code, out, errs)
	}
	if b, _ := os.ReadFile(policyPath); string(b) != "# ours\nauto_approve:\n  commands:\n    - \"git status\"\n    - \"touch ok.txt\"\n" {
		t.Fatalf("policy after --always:\n%s", b)
	}
	if !strings.Contains(errs, "does not list \"touch ok.txt\"") {
		t.Errorf("no note about the user's allowlist: %s", errs)
	}
}

// approve --session approves the request and its like for the rest of the
// session (kept in the store, no policy rule); with --always it is a usage
// error that changes nothing.
func TestApproveForTheSession(t *testing.T) {
	dir, id, sid := supervisedWorkspace(t)
	if code, _, errs := runCLI(t, dir, ana, "approve", "1", "--session", "--always"); code != 2 || !strings.Contains(errs, "--always and --session") {
		t.Fatalf("--session --always: %d %s", code, errs)
	}
	code, out, errs := runCLI(t, dir, ana, "approve", "1", "--session")
	if code != 0 || out != "Request 1 approved by @ana.\nSuch requests of session 1 are approved without asking until it ends.\n" {
		t.Fatalf("approve --session: %d %q %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent", "policy.yaml")); err == nil {
		t.Error("approve --session wrote a policy file")
	}
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if list, err := st.SessionApprovals(context.Background(), sid); err != nil || len(list) != 1 || list[0].ID != id || list[0].DecidedBy != "ana" {
		t.Fatalf("the session's approvals: %+v %v", list, err)
	}
	if code, out, _ = runCLI(t, dir, ana, "approve", "--help"); code != 0 || !strings.Contains(out, "agentinfra approve 12 --session") {
		t.Errorf("approve --help has no --session example: %s", out)
	}
}

// The supervision commands exit with the kind of what went wrong, and with
// --json write it as one JSON error on stderr; a failed decision changes
// nothing (the request stays pending, the session keeps its status).
func TestSupervisionCommandsExitWithTheirKinds(t *testing.T) {
	dir, _, _ := supervisedWorkspace(t)
	mallory := cliOpts{Env: map[string]string{"AGENTINFRA_USER": "mallory"}}
	cases := []struct {
		name string
		as   cliOpts
		args []string
		kind string
		exit int
		code int
		say  string
	}{
		{"unknown request", ana, []string{"approve", "99"}, "not_found", 3, 404, "no request \"99\"; `agentinfra inbox` lists the pending requests"},
		{"unknown request shown", ana, []string{"inbox", "show", "99"}, "not_found", 3, 404, "no request \"99\""},
		{"unknown session", ana, []string{"session", "show", "42"}, "not_found", 3, 404, "no session \"42\"; `agentinfra session list` lists the sessions"},
		{"unknown session paused", ana, []string{"session", "pause", "42"}, "not_found", 3, 404, "no session \"42\""},
		{"unknown prompt answered", ana, []string{"answer", "p99", "continue"}, "not_found", 3, 404, "no prompt \"p99\"; `agentinfra inbox` lists the prompts that wait for an answer"},
		{"unknown alert answered", ana, []string{"answer", "s99", "dismiss"}, "not_found", 3, 404, "no stall alert \"s99\"; `agentinfra inbox` lists the stall alerts"},
		{"checkpoints of an unknown session", ana, []string{"checkpoint", "list", "999"}, "not_found", 3, 404, "no session \"999\"; `agentinfra session list` lists the sessions"},
		{"unknown checkpoint restored", ana, []string{"checkpoint", "restore", "99"}, "not_found", 3, 404, "no checkpoint \"99\"; `agentinfra checkpoint list` lists the checkpoints"},
		{"not an ID", ana, []string{"reject", "x", "--reason", "no"}, "usage", 2, 400, "request ID \"x\" is not a number"},
		{"a stranger approves", mallory, []string{"approve", "1"}, "forbidden", 7, 403, "@mallory may not decide request 1"},
		{"a stranger pauses", mallory, []string{"session", "pause", "1"}, "forbidden", 7, 403, "@mallory may not change session 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, dir, c.as, c.args...)
			if code != c.exit || out != "" || !strings.HasPrefix(errs, "error: ") || !strings.Contains(errs, c.say) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", c.args, code, out, errs, c.exit, c.say)
			}
			code, out, errs = runCLI(t, dir, c.as, append(c.args, "--json")...)
			var js struct {
				Error struct {
					Kind     string `json:"kind"`
					Code     int    `json:"code"`
					ExitCode int    `json:"exit_code"`
					Message  string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(errs), &js); err != nil || code != c.exit || out != "" || js.Error.Kind != c.kind ||
				js.Error.Code != c.code || js.Error.ExitCode != c.exit || !strings.Contains(js.Error.Message, c.say) {
				t.Errorf("%v --json: exit %d, stdout %q, stderr %q (%v); want one JSON error of kind %s, code %d", c.args, code, out, errs, err, c.kind, c.code)
			}
		})
	}
	// Nothing the failures tried happened.
	if code, out, _ := runCLI(t, dir, ana, "inbox", "--json"); code != 0 || !strings.Contains(out, `"id": 1`) {
		t.Fatalf("the request is no longer pending after the failed decisions: %d %s", code, out)
	}
	// Conflicts: a decided request, a session that cannot make the move.
	if code, _, errs := runCLI(t, dir, ana, "reject", "1", "--reason", "no"); code != 0 {
		t.Fatalf("reject: %d %s", code, errs)
	}
	code, _, errs := runCLI(t, dir, ana, "approve", "1", "--json")
	if code != 4 || !strings.Contains(errs, `"kind":"conflict"`) || !strings.Contains(errs, "already rejected via terminal by @ana") {
		t.Errorf("approving a rejected request: exit %d, %s; want exit 4 (conflict)", code, errs)
	}
	code, _, errs = runCLI(t, dir, ana, "approve", "1", "--always", "--yes")
	if code != 4 || !strings.Contains(errs, "already rejected") {
		t.Errorf("approve --always of a rejected request: exit %d, %s; want exit 4 (conflict)", code, errs)
	}
	if code, _, errs = runCLI(t, dir, ana, "session", "stop", "1", "--reason", "done"); code != 0 {
		t.Fatalf("stop: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, dir, ana, "session", "resume", "1")
	if code != 4 || !strings.Contains(errs, "session 1 is terminated: only a paused session, or one interrupted because its supervisor died, can be resumed") {
		t.Errorf("resuming a terminated session: exit %d, %s; want exit 4 (conflict)", code, errs)
	}
}

// approve --always reads the user's allowlist from the environment the
// command was given ($AGENTINFRA_CONFIG_DIR), not the process's: its note
// names that file.
func TestApproveAlwaysReadsTheAllowlistOfTheCommandsEnvironment(t *testing.T) {
	dir, _, _ := supervisedWorkspace(t)
	cfg := t.TempDir()
	env := map[string]string{"AGENTINFRA_USER": "ana", "AGENTINFRA_CONFIG_DIR": cfg}
	code, out, errs := runCLI(t, dir, cliOpts{Env: env}, "approve", "1", "--always", "--yes")
	if code != 0 || !strings.Contains(out, "approved") || !strings.Contains(errs, "note: "+filepath.Join(cfg, "allowlist.yaml")+" does not list") {
		t.Fatalf("approve --always with $AGENTINFRA_CONFIG_DIR=%s: %d %s %s", cfg, code, out, errs)
	}
}
