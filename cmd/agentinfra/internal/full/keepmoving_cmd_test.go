package full

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func openWS(t *testing.T, dir string, opts store.Options) *store.Store {
	t.Helper()
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Prompts and stall alerts show in the inbox beside the request; answer
// decides them once (the loser is told who won); steer queues a message;
// the watchdog pauses.
func TestAnswerSteerWatchdog(t *testing.T) {
	ctx := context.Background()
	dir, _, sid := supervisedWorkspace(t)
	st := openWS(t, dir, store.Options{})
	p, err := st.RaisePrompt(ctx, store.NewPrompt{SessionID: sid, Kind: store.PromptClarification, Text: "Which database?", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.RaiseAlert(ctx, sid, "no activity for 5m0s")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, ana, "inbox")
	if code != 0 || !strings.Contains(out, "Run touch ok.txt") || !strings.Contains(out, "p1  clarification") || !strings.Contains(out, "Which database?") || !strings.Contains(out, "s1  pending") {
		t.Fatalf("inbox: %d\n%s%s", code, out, errs)
	}
	_, out, _ = runCLI(t, dir, ana, "inbox", "--json")
	var items []map[string]any
	if err := json.Unmarshal([]byte(out), &items); err != nil || len(items) != 3 || items[0]["type"] != "approval" || items[1]["ref"] != "p1" || items[2]["ref"] != "s1" {
		t.Fatalf("inbox --json: %v %s", err, out)
	}
	if code, _, errs = runCLI(t, dir, ana, "answer", "p1", "refine"); code == 0 || !strings.Contains(errs, "refine needs the new instruction") {
		t.Fatalf("refine without text: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, dir, cliOpts{Env: map[string]string{"AGENTINFRA_USER": "mallory"}}, "answer", "p1", "continue"); code != 7 || !strings.Contains(errs, "only the session's owner @ana") {
		t.Fatalf("a stranger answers: %d %s", code, errs)
	}
	code, out, errs = runCLI(t, dir, ana, "answer", "p1", "refine", "use", "SQLite", "--json")
	var got store.Prompt
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Status != store.PromptRefined || got.Instruction != "use SQLite" {
		t.Fatalf("answer refine: %d %s %s", code, out, errs)
	}
	if code, _, errs = runCLI(t, dir, ana, "answer", "p1", "stop"); code != 4 || !strings.Contains(errs, "already refined via terminal by @ana") {
		t.Fatalf("a second answer: %d %s", code, errs)
	}
	if code, out, _ = runCLI(t, dir, ana, "answer", "s1", "nudge", "still", "building?"); code != 0 || !strings.Contains(out, "s1 nudged") {
		t.Fatalf("nudge: %s", out)
	}
	if code, out, _ = runCLI(t, dir, ana, "steer", "1", "also run vet"); code != 0 || !strings.Contains(out, "queued for session 1") {
		t.Fatalf("steer: %s", out)
	}
	q, _ := st.QueuedSteering(ctx, sid)
	if len(q) != 2 || q[0].Text != "still building?" || q[1].Text != "also run vet" {
		t.Fatalf("queued: %+v", q)
	}
	if code, out, _ = runCLI(t, dir, ana, "session", "watchdog", "1", "pause"); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("watchdog pause: %s", out)
	}
	if a, _ = st.Alert(ctx, a.ID); a.Status != store.AlertDismissed {
		t.Fatalf("pausing left the alert %s", a.Status)
	}
	if paused, _ := st.WatchdogPaused(ctx, sid); !paused {
		t.Fatal("not paused")
	}
	if code, _, errs = runCLI(t, dir, ana, "answer", "12", "continue"); code == 0 || !strings.Contains(errs, "not a prompt (p12) or stall alert (s12)") {
		t.Fatalf("a request ID: %d %s", code, errs)
	}
	_ = p
}

// checkpoint create, list, restore through the CLI: restore refuses
// without --force when a file changed, and with it stops the session and
// puts the file back.
func TestCheckpointCommands(t *testing.T) {
	ctx := context.Background()
	dir, _, sid := supervisedWorkspace(t)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(dir, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "deep", "x.go"), []byte("package deep\n"), 0o644)
	code, out, errs := runCLI(t, dir, ana, "checkpoint", "create", "1", "--label", "good", "--json")
	var c store.Checkpoint
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Label != "good" || c.Commit == "" {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	if code, out, _ = runCLI(t, dir, ana, "checkpoint", "list"); code != 0 || !strings.Contains(out, "good") || !strings.Contains(out, c.Commit[:12]) {
		t.Fatalf("list: %s", out)
	}
	os.WriteFile(filepath.Join(dir, "src", "deep", "x.go"), []byte("package deep // broken\n"), 0o644)
	if code, _, errs = runCLI(t, dir, ana, "checkpoint", "restore", "1"); code != 5 || !strings.Contains(errs, "modified src/deep/x.go") || !strings.Contains(errs, "--force") {
		t.Fatalf("restore without force: %d %s", code, errs)
	}
	st := openWS(t, dir, store.Options{})
	if ses, _ := st.Session(ctx, sid); !ses.Live() {
		t.Fatal("a refused restore stopped the session")
	}
	if code, out, errs = runCLI(t, dir, ana, "checkpoint", "restore", "1", "--force"); code != 0 || !strings.Contains(out, "modified") {
		t.Fatalf("restore --force: %d %s %s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "deep", "x.go")); string(b) != "package deep\n" {
		t.Fatalf("after restore: %q", b)
	}
	if ses, _ := st.Session(ctx, sid); ses.Live() || !strings.Contains(ses.EndReason, "restoring checkpoint 1") {
		t.Fatalf("the session's run was not stopped first: %+v", ses)
	}
}

// session purge: --dry-run counts, purge deletes what ended before the
// retention, the live session stays.
func TestSessionPurge(t *testing.T) {
	ctx := context.Background()
	dir, _, sid := supervisedWorkspace(t)
	old := openWS(t, dir, store.Options{Now: func() time.Time { return time.Now().AddDate(0, 0, -45) }})
	for range 3 {
		s, _ := old.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "codex"})
		old.SetSessionStatus(ctx, s.ID, store.Transition{To: store.SessionActive, By: "ana"})
		old.RaiseAlert(ctx, s.ID, "silent")
		old.SetSessionStatus(ctx, s.ID, store.Transition{To: store.SessionTerminated, By: "ana", Reason: "done"})
	}
	code, out, _ := runCLI(t, dir, ana, "session", "purge", "--dry-run")
	if code != 0 || !strings.Contains(out, "Would purge 3 session(s)") || !strings.Contains(out, "3 alerts") {
		t.Fatalf("dry run: %s", out)
	}
	code, out, _ = runCLI(t, dir, ana, "session", "purge", "--json")
	var rep store.PurgeReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Sessions != 3 || rep.Alerts != 3 {
		t.Fatalf("purge: %s", out)
	}
	st := openWS(t, dir, store.Options{})
	if all, _ := st.Sessions(ctx, store.SessionFilter{}); len(all) != 1 || all[0].ID != sid {
		t.Fatalf("sessions left: %+v", all)
	}
}
