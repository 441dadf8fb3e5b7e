//go:build linux

package full

// Issue 33: the supervisor of a supervised dispatch SIGKILLed at a random
// point of its run, then `session resume`, again and again (3 times, 30
// with AGENTINFRA_STRESS=1). The CLI is the stub speaking claude's
// stream-json control protocol (claude-counter): one call, a command that
// appends a line to counter.txt, run only when allowed. Every time, the
// run completes, the command runs once, and the lines equal the approvals
// a person gave (the audit's too): none lost, none doubled, none asked
// twice, no command without an approval.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli/clicheck"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSupervisorKilledAtRandomPointsThenResumed(t *testing.T) {
	kills := 3
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		kills = 30
	}
	env, _ := counterClaude(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 33))

	// A run that is not killed: how long a run lasts (from its session to
	// its end) is the span the kills are drawn from.
	var span time.Duration
	t.Run("not-killed", func(t *testing.T) { span = crashTrial(t, env, -1) })
	if span <= 0 {
		t.Fatal("the run that was not killed did not complete")
	}
	t.Logf("a run lasts %v", span)
	for i := range kills {
		at := time.Duration(rng.Int64N(int64(span)))
		t.Run(fmt.Sprintf("kill-%02d-at-%v", i, at.Round(time.Millisecond)), func(t *testing.T) { crashTrial(t, env, at) })
	}
}

// counterClaude is the environment of commands whose claude is the stub
// in claude-counter mode, and the stub's path; its protocol check is
// seeded as passed (the check's fake model is no part of these tests).
func counterClaude(t *testing.T) (env []string, bin string) {
	t.Helper()
	tools := agentstub.Install(t, t.TempDir(), "claude")
	bin = filepath.Join(tools, "node_modules", ".bin", "claude")
	fakemodel.WriteFile(t, bin+".mode", "claude-counter\n")
	home := t.TempDir()
	cache := filepath.Join(home, ".cache")
	key, err := clicheck.Key("claude", bin)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]map[string]any{key: {"version": "2.1.330", "ok": true}})
	fakemodel.WriteFile(t, filepath.Join(cache, "agentinfra", "cli-checks.json"), string(b))
	return []string{"AGENTINFRA_TOOLS=" + tools, "AGENTINFRA_USER=ana", "HOME=" + home,
		"XDG_CACHE_HOME=" + cache, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}, bin
}

// crashTrial dispatches task a1b2c3 supervised in a new workspace, a
// person approving every request as it comes (`agentinfra approve`). With
// at >= 0 the dispatch (the run's supervisor) is SIGKILLed at after its
// session appeared, and the run resumed (`session resume`) unless it had
// ended. It checks the run's end and returns how long the run lasted.
func crashTrial(t *testing.T, base []string, at time.Duration) time.Duration {
	d := startCounterDispatch(t, base)
	dir, env, st, ses, cmd, exited, out := d.dir, d.env, d.st, d.ses, d.cmd, d.exited, d.out
	ctx := context.Background()
	start := time.Now()
	approvals := approveAll(t, dir, env, st)
	defer approvals.stop()

	if at >= 0 {
		time.Sleep(at) // the random point of the run the kill lands on
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		now, _ := st.Session(ctx, ses.ID)
		t.Logf("killed: the session %s, its requests %s, counter.txt %q", now.Status, requestStatuses(st, ses.ID), readOr(filepath.Join(dir, "counter.txt")))
		// The next command finds the supervisor dead (unless the person's
		// approve did meanwhile): a run that had ended (killed between its
		// end and its session's) is terminated as it ended, any other
		// interrupted, and resumed.
		if _, stderr, err := runIn(t, dir, env, "session", "list"); err != nil {
			t.Fatalf("session list after the kill: %v\n%s", err, stderr)
		}
		now, _ = st.Session(ctx, ses.ID)
		if now.Status == store.SessionInterrupted {
			stdout, stderr, err := runIn(t, dir, env, "session", "resume", itoa(ses.ID), "--json")
			if err != nil {
				t.Fatalf("session resume after the kill: %v\n%s%s\nthe dispatch said:\n%s", err, stdout, stderr, out)
			}
			var r supervision.Resumed
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || !r.Restarted || r.Supervisor == 0 {
				t.Fatalf("session resume said: %s (%v)", stdout, err)
			}
			t.Cleanup(func() { syscall.Kill(r.Supervisor, syscall.SIGKILL) })
		} else {
			t.Logf("the run had ended (%s) before the kill", now.Status)
		}
	}
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		now, _ := st.Session(ctx, ses.ID)
		return now.Status == store.SessionTerminated
	}, "the run did not complete; its session:\n%s", runLog{t, dir, env, ses.ID})
	lasted := time.Since(start)
	given := approvals.stop()

	// The task ends consistent: REVIEW, the run's session ended by itself.
	if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | REVIEW |") {
		t.Errorf("the task is not in REVIEW:\n%s\nthe run:\n%s", m, runLog{t, dir, env, ses.ID})
	}
	if now, _ := st.Session(ctx, ses.ID); !strings.HasPrefix(now.EndReason, "success") {
		t.Errorf("the run ended %s: %s", now.Status, now.EndReason)
	}
	checkCounted(t, dir, env, st, ses.ID, given)
	return lasted
}

// runningDispatch is a supervised dispatch of task a1b2c3 in a new
// workspace (its claude the stub of base), started and running: its
// session names its run.
type runningDispatch struct {
	dir    string
	env    []string
	st     *store.Store
	ses    store.Session
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	out    *bytes.Buffer // what the dispatch printed
}

// startCounterDispatch starts the dispatch and waits for its session
// to name its run: from there on a kill is resumed (before, the dispatch
// has not claimed the task or has just: see "Limits" in
// docs/supervision.md).
func startCounterDispatch(t *testing.T, base []string) runningDispatch {
	t.Helper()
	dir, _ := dispatchCLISetup(t)
	d := runningDispatch{dir: dir, env: append([]string{"AGENTINFRA_ROOT=" + dir}, base...), exited: make(chan struct{}), out: &bytes.Buffer{}}
	ws, _ := workspace.New(dir)
	d.cmd = exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", "claude", "--approval-mode", "ask")
	d.cmd.Dir, d.cmd.Env = dir, d.env
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.cmd.Process.Kill(); <-d.exited })
	d.st = openTestStore(t, ws)
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		all, _ := d.st.Sessions(context.Background(), store.SessionFilter{})
		if len(all) > 0 {
			d.ses = all[0]
		}
		return d.ses.RunID != ""
	}, "the dispatch started no session naming its run:\n%s", d.out)
	return d
}

// checkCounted checks that the command ran once, with an approval: one
// line per approval given, per approved request, per approval in the
// audit log.
func checkCounted(t *testing.T, dir string, env []string, st *store.Store, id int64, given int) {
	t.Helper()
	ctx := context.Background()
	ses := store.Session{ID: id}
	lines := 0
	if b, err := os.ReadFile(filepath.Join(dir, "counter.txt")); err == nil {
		lines = strings.Count(string(b), "\n")
	}
	reqs, _ := st.Requests(ctx, ses.ID)
	approved := 0
	for _, r := range reqs {
		switch r.Status {
		case store.StatusApproved:
			approved++
		case store.StatusInterrupted:
		default:
			t.Errorf("request %d is %s, want approved or interrupted (asked again)", r.ID, r.Status)
		}
	}
	evs, _ := st.Audit(ctx, ses.ID)
	audited := 0
	for _, e := range evs {
		if e.Action == "request_approved" {
			audited++
		}
	}
	if lines != 1 || approved != 1 || given != 1 || audited != 1 {
		t.Errorf("counter.txt has %d lines; %d approvals given, %d requests approved, %d approvals in the audit log: want 1 each\nthe run:\n%s",
			lines, given, approved, audited, runLog{t, dir, env, ses.ID})
	}
}

// Issue 33: a supervisor killed after its run started the CLI but before
// the CLI said its session: the resumed run starts a new session whose
// first prompt is the run's own (the dispatch's --task-override) and says
// who resumed it and what was recorded.
func TestAResumedRunWhoseCLINeverSaidItsSessionIsGivenItsPromptAgain(t *testing.T) {
	base, bin := counterClaude(t)
	fakemodel.WriteFile(t, bin+".hold", "")
	dir, _ := dispatchCLISetup(t)
	env := append([]string{"AGENTINFRA_ROOT=" + dir}, base...)
	ws, _ := workspace.New(dir)
	ctx := context.Background()
	const override = "Append your line to counter.txt."
	cmd := exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", "claude", "--approval-mode", "ask", "--task-override", override)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	st := openTestStore(t, ws)
	var ses store.Session
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		all, _ := st.Sessions(ctx, store.SessionFilter{})
		if len(all) == 0 || all[0].RunID == "" {
			return false
		}
		ses = all[0]
		row, err := st.Run(ctx, ses.RunID)
		if err != nil {
			return false
		}
		rec, _ := agentrun.RecordOf(row)
		return len(rec.Scope.Members()) > 0 // the CLI runs, held
	}, "the dispatch did not start its CLI:\n%s", &out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, stderr, err := runIn(t, dir, env, "session", "list"); err != nil { // reaps the run
		t.Fatalf("session list: %v\n%s", err, stderr)
	}
	if err := os.Remove(bin + ".hold"); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runIn(t, dir, env, "session", "resume", itoa(ses.ID), "--json")
	if err != nil {
		t.Fatalf("session resume: %v\n%s%s", err, stdout, stderr)
	}
	var r supervision.Resumed
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || !r.Restarted || r.Supervisor == 0 {
		t.Fatalf("session resume said: %s (%v)", stdout, err)
	}
	t.Cleanup(func() { syscall.Kill(r.Supervisor, syscall.SIGKILL) })
	approvals := approveAll(t, dir, env, st)
	defer approvals.stop()
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		now, _ := st.Session(ctx, ses.ID)
		return now.Status == store.SessionTerminated
	}, "the resumed run did not complete:\n%s", runLog{t, dir, env, ses.ID})
	if n := approvals.stop(); n != 1 {
		t.Errorf("%d approvals given, want 1", n)
	}
	prompts := strings.Split(strings.TrimSuffix(readOr(bin+".prompts"), "\n\x1e\n"), "\n\x1e\n")
	if len(prompts) != 1 {
		t.Fatalf("the CLI read %d first messages, want 1 (the resumed run's):\n%q", len(prompts), prompts)
	}
	for _, want := range []string{override, "@ana resumed the run", "no tool call was asked about or recorded"} {
		if !strings.Contains(prompts[0], want) {
			t.Errorf("the resumed run's first prompt does not say %q:\n%s", want, prompts[0])
		}
	}
	if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | REVIEW |") {
		t.Errorf("the task is not in REVIEW:\n%s", m)
	}
}

// requestStatuses are the statuses of session id's requests.
func requestStatuses(st *store.Store, id int64) []string {
	reqs, _ := st.Requests(context.Background(), id)
	var out []string
	for _, r := range reqs {
		out = append(out, r.Status)
	}
	return out
}

// readOr is the text of file, "" when it cannot be read.
func readOr(file string) string {
	b, _ := os.ReadFile(file)
	return string(b)
}

// approver is a person approving each pending request with `agentinfra
// approve` as it appears.
type approver struct {
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	n    int // approvals given (approve exited 0)
	once sync.Once
}

func approveAll(t *testing.T, dir string, env []string, st *store.Store) *approver {
	a := &approver{done: make(chan struct{})}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-a.done:
				return
			case <-tick.C:
			}
			pending, _ := st.Pending(context.Background())
			for _, p := range pending {
				if _, _, err := runIn(t, dir, env, "approve", itoa(p.ID)); err == nil {
					a.mu.Lock()
					a.n++
					a.mu.Unlock()
				}
			}
		}
	}()
	return a
}

// stop ends the approvals and returns how many were given.
func (a *approver) stop() int {
	a.once.Do(func() { close(a.done) })
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}
