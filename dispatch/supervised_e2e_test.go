package dispatch

// Supervised dispatches (--approval-mode ask) with the REAL agent CLIs
// against scripted fake models that ask for `touch ok.txt`, then say done.
// The person who decides is another process: this test binary re-executed
// as `decide DB ID approve|reject REASON`.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

const deciderEnv = "AGENTINFRA_DISPATCH_DECIDER"

func TestMain(m *testing.M) {
	if os.Getenv(deciderEnv) == "1" {
		os.Exit(deciderMain())
	}
	os.Exit(m.Run())
}

func deciderMain() int {
	ctx := context.Background()
	a := os.Args[len(os.Args)-4:]
	s, err := store.Open(ctx, a[0], store.Options{})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 1
	}
	defer s.Close()
	id, _ := strconv.ParseInt(a[1], 10, 64)
	if _, err := s.Decide(ctx, store.Decision{RequestID: id, Approve: a[2] == "approve", By: "ana", Surface: store.SurfaceTerminal, Reason: a[3]}); err != nil {
		os.Stderr.WriteString(err.Error())
		return 1
	}
	return 0
}

type supCLI struct {
	name string
	fake func(testing.TB, fakemodel.Script) *fakemodel.Server
	cli  func(testing.TB, string) fakemodel.CLI
	path string
}

var supCLIs = []supCLI{
	{runner.CLIClaude, fakemodel.NewClaudeScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }, "/v1/messages"},
	{runner.CLICodex, fakemodel.NewCodexScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Codex(t, u) }, "/v1/responses"},
	{runner.CLIGemini, fakemodel.NewGeminiScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }, ":streamGenerateContent"},
}

// forEachSupCLI runs fn per CLI in parallel; gemini (~15 s a run here)
// only with AGENTINFRA_E2E=1.
func forEachSupCLI(t *testing.T, fn func(t *testing.T, c supCLI)) {
	for _, c := range supCLIs {
		t.Run(c.name, func(t *testing.T) {
			if c.name == runner.CLIGemini && os.Getenv("AGENTINFRA_E2E") != "1" {
				t.Skip("gemini's supervised runs take ~15 s each: AGENTINFRA_E2E=1 runs them")
			}
			t.Parallel()
			fn(t, c)
		})
	}
}

// supervisedRun dispatches task a1a1a1 in approval mode ask through c's
// real CLI; onRequest is called (from another goroutine) with the first
// request that waits.
func supervisedRun(t *testing.T, c supCLI, ws *workspace.Workspace, onRequest func(db string, r store.PendingView)) (*fakemodel.Server, Outcome, error) {
	t.Helper()
	fake := c.fake(t, fakemodel.ShellOnce("touch", "touch ok.txt", "done"))
	cli := c.cli(t, fake.URL)
	opts := e2eOptions(cli, "a1a1a1", c.name)
	opts.ApprovalMode, opts.Owner, opts.TaskOverride = runner.ApprovalAsk, "ana", "Please touch ok.txt in the current folder."
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()
	watchDone := make(chan struct{})
	go func() { // a person watching the inbox
		defer close(watchDone)
		if onRequest == nil {
			return
		}
		st, err := store.OpenWorkspace(ctx, ws, store.Options{})
		if err != nil {
			t.Error(err)
			return
		}
		defer st.Close()
		changes, _ := st.Changes(ctx)
		for {
			p, _ := st.Pending(ctx)
			if len(p) > 0 {
				onRequest(st.Path(), p[0])
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-changes:
			}
		}
	}()
	out, err := Run(ctx, ws, opts, nil)
	cancel()
	<-watchDone
	return fake, out, err
}

func decideFromAnotherProcess(t *testing.T, db string, id int64, verdict, reason string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", db, strconv.FormatInt(id, 10), verdict, reason)
	cmd.Env = append(os.Environ(), deciderEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the decider failed: %v\n%s", err, out)
	}
}

// sessionOf is the session of a dispatch's run, read from the store.
func sessionOf(t *testing.T, ws *workspace.Workspace, runID string) (store.Session, []store.Request, store.RunRow) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.Sessions(ctx, store.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.RunID == runID {
			reqs, _ := st.Requests(ctx, s.ID)
			row, err := st.Run(ctx, runID)
			if err != nil {
				t.Fatalf("the runs table has no row for %s: %v", runID, err)
			}
			return s, reqs, row
		}
	}
	t.Fatalf("no session is run %s: %+v", runID, all)
	return store.Session{}, nil, store.RunRow{}
}

func TestSupervisedDispatchApprovedFromAnotherProcess(t *testing.T) {
	forEachSupCLI(t, func(t *testing.T, c supCLI) {
		ws := dispatchWorkspace(t)
		var seen store.PendingView
		_, out, err := supervisedRun(t, c, ws, func(db string, r store.PendingView) {
			seen = r
			decideFromAnotherProcess(t, db, r.ID, "approve", "")
		})
		if err != nil {
			t.Fatalf("Run: %v (%+v)", err, out.Result)
		}
		// What the person saw: the command, its risk, the agent and task.
		if !strings.Contains(seen.Command, "touch ok.txt") || seen.Kind != store.KindCommand || seen.Risk == "" || seen.TaskID != "a1a1a1" || seen.Owner != "ana" {
			t.Errorf("the pending request as listed: %+v", seen)
		}
		if _, err := os.Stat(filepath.Join(ws.Root, "ok.txt")); err != nil {
			t.Fatalf("approved, but ok.txt is not there: %v", err)
		}
		if st := taskOf(t, ws, "a1a1a1").Status; st != "REVIEW" || out.Outcome != OutcomeSuccess {
			t.Fatalf("task %s, outcome %s (%s)", st, out.Outcome, out.Reason)
		}
		ses, reqs, row := sessionOf(t, ws, out.RunID)
		if ses.Status != store.SessionTerminated || ses.Owner != "ana" || ses.CLI != c.name || ses.TaskID != "a1a1a1" || ses.Mode != store.ModeLocal {
			t.Errorf("session: %+v", ses)
		}
		if len(reqs) != 1 || reqs[0].Status != store.StatusApproved || reqs[0].DecidedBy != "ana" {
			t.Errorf("requests: %+v", reqs)
		}
		if row.Caller != store.CallerDispatch || !row.Finished || row.Outcome != OutcomeSuccess || !strings.Contains(string(row.Record), `"prompt_parts"`) {
			t.Errorf("the run's row: %+v %s", row, row.Record)
		}
	})
}

func TestSupervisedDispatchRejectedWithAReason(t *testing.T) {
	forEachSupCLI(t, func(t *testing.T, c supCLI) {
		ws := dispatchWorkspace(t)
		const reason = "NO-TOUCHING-use-a-temp-dir"
		fake, out, err := supervisedRun(t, c, ws, func(db string, r store.PendingView) {
			decideFromAnotherProcess(t, db, r.ID, "reject", reason)
		})
		if err != nil {
			t.Fatalf("Run: %v (%+v)", err, out.Result)
		}
		if _, err := os.Stat(filepath.Join(ws.Root, "ok.txt")); err == nil {
			t.Fatal("rejected, but ok.txt exists")
		}
		var bodies strings.Builder
		for _, r := range fake.Requests(c.path) {
			bodies.Write(r.Body)
		}
		if !strings.Contains(bodies.String(), reason) {
			t.Errorf("the reason never reached the model")
		}
		_, reqs, _ := sessionOf(t, ws, out.RunID)
		if len(reqs) != 1 || reqs[0].Status != store.StatusRejected || reqs[0].Reason != reason {
			t.Errorf("requests: %+v", reqs)
		}
	})
}

// The workspace policy approves the command (bounded by the user's
// allowlist): nobody is asked, the audit log says policy.
func TestSupervisedDispatchPolicyAutoApproves(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("AGENTINFRA_CONFIG_DIR", cfg) // not parallel: the allowlist's folder
	fakemodel.WriteFile(t, filepath.Join(cfg, "allowlist.yaml"), "commands: [\"touch *\"]\n")
	c := supCLIs[0] // claude: the fastest
	ws := dispatchWorkspace(t)
	fakemodel.WriteFile(t, filepath.Join(ws.AgentDir(), "policy.yaml"), "auto_approve:\n  commands:\n    - \"touch ok.txt\"\n")
	_, out, err := supervisedRun(t, c, ws, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "ok.txt")); err != nil {
		t.Fatal("the policy approves it, but ok.txt does not exist")
	}
	ses, reqs, _ := sessionOf(t, ws, out.RunID)
	if len(reqs) != 0 {
		t.Fatalf("a person was asked: %+v", reqs)
	}
	st, _ := store.OpenWorkspace(context.Background(), ws, store.Options{})
	defer st.Close()
	evs, _ := st.Audit(context.Background(), ses.ID)
	allowed, ran := false, false
	for _, e := range evs {
		allowed = allowed || (e.Action == bridge.AuditPolicyAllowed && e.Surface == store.SurfacePolicy && strings.Contains(string(e.Detail), "touch ok.txt"))
		ran = ran || (e.Action == bridge.AuditRan && allowed && strings.Contains(string(e.Detail), "touch ok.txt"))
	}
	if !allowed || !ran {
		t.Fatalf("the audit log does not say the policy allowed it and claude ran it: %+v", evs)
	}
}

// max_concurrent_sessions: a supervised dispatch beyond it is refused
// before the task is claimed, naming the limit and the sessions holding it.
func TestSupervisedDispatchRefusedAtTheSessionLimit(t *testing.T) {
	ws := dispatchWorkspace(t)
	fakemodel.WriteFile(t, ws.ConfigPath(), "supervision:\n  max_concurrent_sessions: 1\n")
	ctx := context.Background()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, _ := st.CreateSession(ctx, store.NewSession{Owner: "bo", Workspace: ws.Root, CLI: "claude", Title: "another run"})
	// Its supervisor is this test process: alive, so the place is held.
	st.SetSupervisor(ctx, held.ID, store.Supervisor{PID: os.Getpid()})
	if _, err := st.SetSessionStatus(ctx, held.ID, store.Transition{To: store.SessionActive, By: "bo"}); err != nil {
		t.Fatal(err)
	}
	before := readMatrix(t, ws)
	opts := stubOptions("/nonexistent/claude", "a1a1a1")
	opts.CLI, opts.ApprovalMode, opts.Owner = runner.CLIClaude, runner.ApprovalAsk, "ana"
	_, err = Run(ctx, ws, opts, nil)
	var le *store.LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrRefused) || le.Limit != 1 || len(le.Holding) != 1 || le.Holding[0].ID != held.ID {
		t.Fatalf("err = %v, want the limit naming session %d", err, held.ID)
	}
	if after := readMatrix(t, ws); string(after) != string(before) {
		t.Fatal("a refused dispatch changed the matrix")
	}
}
