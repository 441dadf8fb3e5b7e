//go:build linux

package full

// A supervised dispatch of each real CLI against a scripted fake model, its
// supervisor SIGKILLed while its request waits, then `session resume`: the
// CLI continues its own session (the fake receives the earlier
// conversation), the request is asked again, the approval runs the
// command, the task reaches REVIEW.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// resumeScript asks for `touch ok.txt` on the task's prompt and again on
// the resume's message (the call that waited never ran); "done" after the
// tool's result.
func resumeScript(a fakemodel.Ask) fakemodel.Answer {
	if !a.ToolCall && (strings.Contains(a.User, "touch ok.txt") || strings.Contains(a.User, "resumed the run")) {
		return fakemodel.Answer{Shell: "touch ok.txt"}
	}
	return fakemodel.Answer{Text: "done"}
}

// runIn runs agentinfra in dir with env; it returns stdout, and stderr.
func runIn(t *testing.T, dir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(taskBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// resumeCLI is a real CLI and its scripted fake.
type resumeCLI struct {
	name string
	fake func(testing.TB, fakemodel.Script) *fakemodel.Server
	cli  func(testing.TB, string) fakemodel.CLI
	path string // of the fake's model requests
}

var resumeCLIs = []resumeCLI{
	{"claude", fakemodel.NewClaudeScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }, "/v1/messages"},
	{"codex", fakemodel.NewCodexScript, codexByConfig, "/v1/responses"},
	{"gemini", fakemodel.NewGeminiScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }, ":streamGenerateContent"},
}

// codexByConfig is fakemodel.Codex with the fake's provider in its
// config.toml rather than in -c arguments: dispatch (and the resumed run)
// start codex with no arguments of the test's.
func codexByConfig(t testing.TB, url string) fakemodel.CLI {
	cli := fakemodel.Codex(t, url)
	path := filepath.Join(cli.Home, ".codex", "config.toml")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	provider := "\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + url + "/v1\"\nwire_api = \"responses\"\n" +
		"env_key = \"FAKE_OPENAI_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
	fakemodel.WriteFile(t, path, "model_provider = \"fake\"\n"+string(old)+provider)
	cli.ExtraArgs = nil
	return cli
}

// killedWhilePending starts the supervised dispatch of c against fake,
// waits for its request and SIGKILLs the dispatch (the run's supervisor).
func killedWhilePending(t *testing.T, c resumeCLI, fake *fakemodel.Server) (dir string, env []string, first store.PendingView) {
	t.Helper()
	dir, cmd, out, env := supervisedDispatchTo(t, nil, c.name, c.cli(t, fake.URL))
	first = waitPending(t, dir, out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return dir, env, first
}

// resumedToReview follows the resumed run of session id: its request asked
// again (a new one, pending), approved, the file made, the task in REVIEW,
// the session ended; and the fake's first request after the resume carries
// the conversation before it.
func resumedToReview(t *testing.T, c resumeCLI, dir string, env []string, fake *fakemodel.Server, first store.PendingView, before int) {
	t.Helper()
	resumedToReviewIn(t, c, dir, dir, env, fake, first, before)
}

// resumedToReviewIn is resumedToReview of a run whose folder is work (a
// fleet agent's worktree).
func resumedToReviewIn(t *testing.T, c resumeCLI, dir, work string, env []string, fake *fakemodel.Server, first store.PendingView, before int) {
	t.Helper()
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var again store.Request
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		reqs, _ := st.Requests(context.Background(), first.SessionID)
		for _, r := range reqs {
			if r.ID != first.ID && r.Status == store.StatusPending {
				again = r
				return true
			}
		}
		return false
	}, "the resumed run did not ask again; its log:\n%s", runLog{t, dir, env, first.SessionID})
	if req, _ := st.Request(context.Background(), first.ID); req.Status != store.StatusInterrupted {
		t.Errorf("the request pending at the kill is %s, want interrupted", req.Status)
	}
	if _, err := os.Stat(filepath.Join(work, "ok.txt")); err == nil {
		t.Fatal("ok.txt exists before any approval")
	}
	if _, stderr, err := runIn(t, dir, env, "approve", itoa(again.ID)); err != nil {
		t.Fatalf("approve %d: %v\n%s", again.ID, err, stderr)
	}
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		ses, _ := st.Session(context.Background(), first.SessionID)
		return !ses.Live() && ses.Status != store.SessionCreated
	}, "the resumed session did not end; its log:\n%s", runLog{t, dir, env, first.SessionID})
	if _, err := os.Stat(filepath.Join(work, "ok.txt")); err != nil {
		t.Errorf("approved, but ok.txt is not there: %v", err)
	}
	if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | REVIEW |") {
		t.Errorf("the task is not in REVIEW:\n%s\nlog:\n%s", m, runLog{t, dir, env, first.SessionID})
	}
	seen := fake.Requests(c.path)
	resumedAsk := ""
	for _, s := range seen[before:] {
		if strings.Contains(string(s.Body), "resumed the run") {
			resumedAsk = string(s.Body)
			break
		}
	}
	if resumedAsk == "" || !strings.Contains(resumedAsk, "Please touch ok.txt") {
		t.Errorf("the model's first request after the resume does not carry the conversation before it (%d requests after the resume)", len(seen)-before)
	}
}

// runLog is what the resumed run of session id said, read when a failure
// prints it: the detached supervisor's log (a dispatch's), the session, and
// the fleet agent's run log.
type runLog struct {
	t   *testing.T
	dir string
	env []string
	id  int64
}

func (l runLog) String() string {
	ws, _ := workspace.New(l.dir)
	b, _ := os.ReadFile(filepath.Join(store.StateDir(ws), "resume-"+itoa(l.id)+".log"))
	show, _, _ := runIn(l.t, l.dir, l.env, "session", "show", itoa(l.id))
	logs, _, _ := runIn(l.t, l.dir, l.env, "agent", "logs", "papi", "--tail", "30")
	return string(b) + "\n" + show + "\n" + logs
}

func TestSupervisedDispatchResumedAfterTheSupervisorIsKilled(t *testing.T) {
	for _, c := range resumeCLIs {
		t.Run(c.name, func(t *testing.T) { resumedAfterKill(t, c) })
	}
}

func resumedAfterKill(t *testing.T, c resumeCLI) {
	fake := c.fake(t, resumeScript)
	dir, env, first := killedWhilePending(t, c, fake)
	before := len(fake.Requests(c.path))

	// session list (another process) finds it interrupted and resumable.
	out, stderr, err := runIn(t, dir, env, "session", "list", "--json")
	if err != nil {
		t.Fatalf("session list: %v\n%s", err, stderr)
	}
	var listed []struct {
		ID        int64
		Status    string
		Resumable bool
	}
	json.Unmarshal([]byte(out), &listed)
	if len(listed) != 1 || listed[0].ID != first.SessionID || listed[0].Status != store.SessionInterrupted || !listed[0].Resumable {
		t.Fatalf("session list after the kill: %s", out)
	}

	out, stderr, err = runIn(t, dir, env, "session", "resume", itoa(first.SessionID), "--json")
	if err != nil {
		t.Fatalf("session resume: %v\n%s", err, stderr)
	}
	var r supervision.Resumed
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Restarted || r.Supervisor == 0 || r.Session.ID != first.SessionID {
		t.Fatalf("session resume said: %s (%v)", out, err)
	}
	t.Cleanup(func() { syscall.Kill(r.Supervisor, syscall.SIGKILL) })
	resumedToReview(t, c, dir, env, fake, first, before)
	readme := readText(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"))
	if !strings.Contains(readme, "resumed by @ana") {
		t.Errorf("the task's status log does not say who resumed it:\n%s", readme)
	}
}

func TestSupervisedDispatchResumedAutomaticallyByAgentList(t *testing.T) {
	for _, c := range resumeCLIs {
		t.Run(c.name, func(t *testing.T) { resumedAutomatically(t, c) })
	}
}

func resumedAutomatically(t *testing.T, c resumeCLI) {
	fake := c.fake(t, resumeScript)
	dir, env, first := killedWhilePending(t, c, fake)
	before := len(fake.Requests(c.path))
	fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "config.yaml"), "supervision:\n  resume: auto\n")

	_, stderr, err := runIn(t, dir, env, "agent", "list")
	if err != nil {
		t.Fatalf("agent list: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "resumed session") {
		t.Fatalf("agent list did not say it resumed the run:\n%s", stderr)
	}
	t.Cleanup(func() {
		ws, _ := workspace.New(dir)
		if st, err := store.OpenWorkspace(context.Background(), ws, store.Options{}); err == nil {
			if live, err := st.LiveSupervisors(context.Background()); err == nil && live[first.SessionID].PID > 0 {
				syscall.Kill(live[first.SessionID].PID, syscall.SIGKILL)
			}
			st.Close()
		}
	})
	resumedToReview(t, c, dir, env, fake, first, before)
	readme := readText(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"))
	if !strings.Contains(readme, "supervision.resume: auto, 1 of 3") {
		t.Errorf("the task's status log does not say the resume was automatic:\n%s", readme)
	}
}

// A fleet agent's supervised run: its detached supervisor SIGKILLed while a
// request waits, `session resume` starts a new run of the agent on
// claude's own session, asked again, approved → the file in the agent's
// worktree, the task REVIEW.
func TestFleetRunResumedAfterItsSupervisorIsKilled(t *testing.T) {
	c := resumeCLIs[0]
	fake := c.fake(t, resumeScript)
	dir, _ := dispatchCLISetup(t)
	fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"), "# Add retry\n\nPlease touch ok.txt in the current folder.\n\n## Status log\n\n")
	gitInitCommitted(t, dir)
	cli := c.cli(t, fake.URL)
	env := append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	startPapiSupervised(t, dir, env)
	first := waitPending(t, dir, &syncBuffer{})
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, _ := st.LiveSupervisors(context.Background())
	st.Close()
	if live[first.SessionID].PID == 0 {
		t.Fatalf("the session names no supervisor: %+v", live)
	}
	syscall.Kill(live[first.SessionID].PID, syscall.SIGKILL)
	before := len(fake.Requests(c.path))

	out, stderr, err := runIn(t, dir, env, "session", "resume", itoa(first.SessionID), "--json")
	if err != nil {
		t.Fatalf("session resume: %v\n%s", err, stderr)
	}
	var r supervision.Resumed
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Restarted || r.RunID == "" || r.Supervisor == 0 {
		t.Fatalf("session resume said: %s (%v)", out, err)
	}
	wt := agentWorktree(t, dir, env, "papi")
	resumedToReviewIn(t, c, dir, wt, env, fake, first, before)
}

// waitAgent waits for agent papi to have one of the statuses.
func waitAgent(t *testing.T, dir string, env []string, statuses ...string) {
	t.Helper()
	last := &syncBuffer{}
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		out, stderr, _ := runIn(t, dir, env, "agent", "show", "papi", "--json")
		var a struct{ Agent struct{ Status string } }
		json.Unmarshal([]byte(out), &a)
		last.b.Reset()
		last.Write([]byte(out + stderr))
		for _, s := range statuses {
			if a.Agent.Status == s {
				return true
			}
		}
		return false
	}, "agent papi is not %v: %s", statuses, last)
}

// agentWorktree is the path of an agent's worktree.
func agentWorktree(t *testing.T, dir string, env []string, name string) string {
	t.Helper()
	out, stderr, err := runIn(t, dir, env, "agent", "show", name, "--json")
	if err != nil {
		t.Fatalf("agent show: %v\n%s", err, stderr)
	}
	var a struct {
		Agent struct{ Workspace struct{ Path string } }
	}
	json.Unmarshal([]byte(out), &a)
	return a.Agent.Workspace.Path
}
