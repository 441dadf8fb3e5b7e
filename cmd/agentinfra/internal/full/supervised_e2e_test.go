//go:build linux

package full

// Supervised dispatches through the real binary and the real claude CLI
// against a scripted fake model that asks for `touch ok.txt`:
//   - the dispatching process SIGKILLed while its request waits: the next
//     command finds the session interrupted, its request interrupted, no
//     process of the run left, the task BLOCKED with the reason;
//   - on a terminal (a real pseudo-terminal) dispatch asks inline, and the
//     answer typed there reaches the agent.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// supervisedDispatch starts `agentinfra dispatch a1b2c3 --approval-mode
// ask` with claude against a fake that asks for `touch ok.txt`.
func supervisedDispatch(t *testing.T, stdin *os.File) (dir string, fake *fakemodel.Server, cmd *exec.Cmd, stderr *syncBuffer) {
	t.Helper()
	fake = fakemodel.NewClaudeScript(t, fakemodel.ShellOnce("touch", "touch ok.txt", "done"))
	dir, cmd, stderr, _ = supervisedDispatchTo(t, stdin, "claude", fakemodel.Claude(t, fake.URL))
	return dir, fake, cmd, stderr
}

// supervisedDispatchTo starts the supervised dispatch with the CLI name,
// prepared by cli for its fake; env is the dispatch's environment.
func supervisedDispatchTo(t *testing.T, stdin *os.File, name string, cli fakemodel.CLI) (dir string, cmd *exec.Cmd, stderr *syncBuffer, env []string) {
	t.Helper()
	dir, _ = dispatchCLISetup(t)
	cmd, stderr, env = startDispatchIn(t, dir, stdin, name, cli, "Please touch ok.txt in the current folder.")
	return dir, cmd, stderr, env
}

// startSupervisedDispatch starts `agentinfra dispatch a1b2c3
// --approval-mode ask` in dir with claude against a fake model that
// answers as script says, prompt the task's text.
func startSupervisedDispatch(t *testing.T, dir string, stdin *os.File, script fakemodel.Script, prompt string) (*fakemodel.Server, *exec.Cmd, *syncBuffer) {
	t.Helper()
	fake := fakemodel.NewClaudeScript(t, script)
	cmd, out, _ := startDispatchIn(t, dir, stdin, "claude", fakemodel.Claude(t, fake.URL), prompt)
	return fake, cmd, out
}

// startDispatchIn starts the supervised dispatch of task a1b2c3 in dir
// with the CLI name, prepared by cli for its fake.
func startDispatchIn(t *testing.T, dir string, stdin *os.File, name string, cli fakemodel.CLI, prompt string) (cmd *exec.Cmd, stderr *syncBuffer, env []string) {
	t.Helper()
	fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"), "# Add retry\n\nRetry three times.\n\n## Status log\n\n")
	cmd = exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", name, "--model", cli.Model, "--approval-mode", "ask",
		"--task-override", prompt)
	cmd.Dir = dir
	env = append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	cmd.Env = env
	stderr = &syncBuffer{}
	cmd.Stderr, cmd.Stdout = stderr, stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stderr, env
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitPending waits for the run's first pending request.
func waitPending(t *testing.T, dir string, out *syncBuffer) store.PendingView {
	t.Helper()
	return waitPendingWithin(t, dir, out, fakemodel.Timeout)
}

// waitPendingWithin is waitPending waiting up to timeout (a CLI that takes
// long to send a huge call).
func waitPendingWithin(t *testing.T, dir string, out *syncBuffer, timeout time.Duration) store.PendingView {
	t.Helper()
	ws, _ := workspace.New(dir)
	var pending []store.PendingView
	poll.EventuallyWithin(t, timeout, func() bool {
		if st, err := store.OpenWorkspace(context.Background(), ws, store.Options{}); err == nil {
			pending, _ = st.Pending(context.Background())
			st.Close()
		}
		return len(pending) > 0
	}, "no request was raised; the dispatch said:\n%s", out)
	return pending[0]
}

func TestSupervisedDispatchKilledWhilePending(t *testing.T) {
	dir, _, cmd, out := supervisedDispatch(t, nil)
	p := waitPending(t, dir, out)
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ses, err := st.Session(context.Background(), p.SessionID)
	if err != nil || ses.RunID == "" {
		t.Fatalf("the session does not name its run: %+v %v", ses, err)
	}
	row, err := st.Run(context.Background(), ses.RunID)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := agentrun.RecordOf(row)
	if len(rec.Scope.Members()) == 0 {
		t.Fatalf("the claude of the run is not marked as the run's (scope %+v)", rec.Scope)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The next command (another process) finds the dead supervisor.
	next := exec.Command(taskBinary(t), "session", "list", "--all", "--json")
	next.Dir, next.Env = dir, []string{"AGENTINFRA_ROOT=" + dir, "AGENTINFRA_USER=ana", "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	next.Stdout, next.Stderr = &stdout, &stderr
	if err := next.Run(); err != nil {
		t.Fatalf("session list: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "task a1b2c3 is BLOCKED") {
		t.Errorf("session list did not say what it settled:\n%s", stderr.String())
	}
	var listed []store.Session
	json.Unmarshal(stdout.Bytes(), &listed)
	ses, _ = st.Session(context.Background(), p.SessionID)
	if ses.Status != store.SessionInterrupted || !strings.Contains(ses.EndReason, "supervisor") {
		t.Errorf("session after the kill: %+v (listed %+v)", ses, listed)
	}
	req, _ := st.Request(context.Background(), p.ID)
	if req.Status != store.StatusInterrupted {
		t.Errorf("the pending request is %s, want interrupted", req.Status)
	}
	if left := rec.Scope.Members(); len(left) > 0 {
		t.Errorf("processes of the run are left: %v", left)
	}
	if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | BLOCKED |") {
		t.Errorf("the task is not BLOCKED:\n%s", m)
	}
	readme := readText(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"))
	if !strings.Contains(readme, "BLOCKED") || !strings.Contains(readme, "its supervisor (pid") {
		t.Errorf("the task's status log does not give the reason:\n%s", readme)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.txt")); err == nil {
		t.Error("ok.txt exists: nobody approved")
	}
	row, _ = st.Run(context.Background(), ses.RunID)
	if !row.Finished || row.Outcome != agentrun.OutcomeFailed {
		t.Errorf("the run's record after the reap: %+v", row)
	}
}

// openPTY opens a pseudo-terminal: the master (the person's keyboard) and
// the slave (the dispatch's standard input).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	go func() { // drain the echo
		buf := make([]byte, 1024)
		for {
			if _, err := m.Read(buf); err != nil {
				return
			}
		}
	}()
	return m, s
}

func TestSupervisedDispatchAsksInlineOnATerminal(t *testing.T) {
	master, slave := openPTY(t)
	dir, fake, cmd, out := supervisedDispatch(t, slave)
	p := waitPending(t, dir, out)
	poll.Eventually(t, func() bool { return strings.Contains(out.String(), "approve? y = yes") }, "no inline question; the dispatch said:\n%s", out)
	const reason = "NOT-HERE-use-tmp"
	master.Write([]byte("maybe\n")) // not an answer: asked again
	master.Write([]byte("n " + reason + "\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, out.String())
	}
	said := out.String()
	for _, want := range []string{"? request ", "(risk ", "command: touch ok.txt", "rejected"} {
		if !strings.Contains(said, want) {
			t.Errorf("the inline prompt lacks %q:\n%s", want, said)
		}
	}
	ws, _ := workspace.New(dir)
	st, _ := store.OpenWorkspace(context.Background(), ws, store.Options{})
	defer st.Close()
	req, _ := st.Request(context.Background(), p.ID)
	if req.Status != store.StatusRejected || req.Reason != reason || req.DecidedBy != "ana" || req.Surface != store.SurfaceTerminal {
		t.Errorf("the request after the inline answer: %+v", req)
	}
	var bodies strings.Builder
	for _, r := range fake.Requests("/v1/messages") {
		bodies.Write(r.Body)
	}
	if !strings.Contains(bodies.String(), reason) {
		t.Error("the reason typed inline never reached the model")
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.txt")); err == nil {
		t.Error("rejected inline, but ok.txt exists")
	}
}
