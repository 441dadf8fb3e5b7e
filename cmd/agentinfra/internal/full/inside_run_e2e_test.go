//go:build linux

package full

// The real binary's supervised dispatch is a child subreaper: a process
// the real claude's approved command detaches (setsid, a double fork, no
// environment) stays below it, is found inside the run by contain.InsideRun
// from the store's supervisors, and is gone when the dispatch ends.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSupervisedDispatchKeepsDetachedProcessesInsideTheRun(t *testing.T) {
	dir, _ := dispatchCLISetup(t)
	pidFile := filepath.Join(dir, "escaped.pid")
	steps := []string{
		`setsid sh -c 'env -i sleep 300.8 </dev/null >/dev/null 2>&1 & echo $! > "$0"' ` + pidFile,
		"touch ok.txt",
	}
	var next atomic.Int32 // the step the model asks for next
	fake := fakemodel.NewClaudeScript(t, func(a fakemodel.Ask) fakemodel.Answer {
		if (a.ToolCall || strings.Contains(a.User, "detach")) && int(next.Load()) < len(steps) {
			return fakemodel.Answer{Shell: steps[next.Add(1)-1]}
		}
		return fakemodel.Answer{Text: "done"}
	})
	cli := fakemodel.Claude(t, fake.URL)
	cmd := exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", "claude", "--model", cli.Model, "--approval-mode", "ask",
		"--task-override", "Please detach a process.")
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	out := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	ctx := context.Background()
	ws, _ := workspace.New(dir)
	decide := func(p store.PendingView) {
		st, err := store.OpenWorkspace(ctx, ws, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Decide(ctx, store.Decision{RequestID: p.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
			t.Fatal(err)
		}
	}
	first := waitPending(t, dir, out)
	decide(first)

	var escaped int
	poll.EventuallyNil(t, func() error {
		b, _ := os.ReadFile(pidFile)
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if escaped == 0 || parentOf(escaped) != cmd.Process.Pid {
			return fmt.Errorf("the detached process %d was not adopted by the dispatch %d (its parent: %d); the dispatch said:\n%s", escaped, cmd.Process.Pid, parentOf(escaped), out)
		}
		return nil
	})
	second := waitPending(t, dir, out) // the run waits: check while it is on
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := st.LiveSupervisors(ctx)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sups []contain.Proc
	for _, s := range live {
		sups = append(sups, contain.Proc{PID: s.PID, Start: s.Start})
	}
	if in, why := contain.InsideRun(escaped, sups); !in {
		t.Errorf("the detached process is not found inside the run (supervisors %v)", sups)
	} else {
		t.Log(why)
	}
	if in, why := contain.CallerInsideRun(sups); in {
		t.Errorf("the test itself is inside: %s", why)
	}
	decide(second)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the dispatch: %v\n%s", err, out)
	}
	if contain.Alive(escaped, "") {
		t.Errorf("the detached process %d outlived the dispatch", escaped)
	}
}

// parentOf is pid's parent (0 when it is gone).
func parentOf(pid int) int {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
