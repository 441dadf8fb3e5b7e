package main

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
	return dir, r.ID, ses.ID
}

var ana = cliOpts{env: map[string]string{"AGENTINFRA_USER": "ana"}}

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
	if code, _, errs = runCLI(t, dir, cliOpts{env: map[string]string{"AGENTINFRA_USER": "mallory"}}, "approve", "1"); code != 1 || !strings.Contains(errs, "only the session's owner @ana") {
		t.Fatalf("a stranger's approve: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, dir, ana, "reject", "1"); code != 2 || !strings.Contains(errs, "--reason") {
		t.Fatalf("reject without a reason: %d %s", code, errs)
	}
	if code, out, errs = runCLI(t, dir, ana, "approve", "1"); code != 0 || out != "Request 1 approved by @ana.\n" {
		t.Fatalf("approve: %d %q %s", code, out, errs)
	}
	code, _, errs = runCLI(t, dir, ana, "reject", "1", "--reason", "too late")
	if code != 1 || !strings.Contains(errs, "already approved via terminal by @ana at ") {
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
	t.Setenv("AGENTINFRA_CONFIG_DIR", t.TempDir())
	policyPath := filepath.Join(dir, ".agent", "policy.yaml")
	os.WriteFile(policyPath, []byte("# ours\nauto_approve:\n  commands:\n    - \"git status\"\n"), 0o644)
	// Not confirmed: nothing changes.
	code, _, errs := runCLI(t, dir, cliOpts{env: ana.env, stdin: "n\n"}, "approve", "1", "--always")
	if code != 1 || !strings.Contains(errs, "+    - \"touch ok.txt\"") || !strings.Contains(errs, "nothing changed") {
		t.Fatalf("unconfirmed: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(policyPath); strings.Contains(string(b), "touch") {
		t.Fatal("an unconfirmed rule was written")
	}
	code, out, errs := runCLI(t, dir, cliOpts{env: ana.env, stdin: "y\n"}, "approve", "1", "--always")
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
