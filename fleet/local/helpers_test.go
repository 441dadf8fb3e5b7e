package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// The test binary doubles as the supervisor: Start launches it with
// FLEET_TEST_SUPERVISE=1 and "--root ROOT NAME RUN", as the CLI's hidden
// `agent run-supervisor` command would be.
func TestMain(m *testing.M) {
	if os.Getenv("FLEET_TEST_SUPERVISE") == "1" {
		os.Exit(superviseMain(os.Args[1:]))
	}
	if os.Getenv(crashHelperEnv) != "" {
		os.Exit(crashHelperMain())
	}
	os.Exit(m.Run())
}

func superviseMain(args []string) int {
	if len(args) != 4 || args[0] != "--root" {
		fmt.Fprintln(os.Stderr, "usage: --root ROOT NAME RUN")
		return 2
	}
	ws, err := workspace.New(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := RunSupervisor(ctx, ws, args[2], args[3], Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// buildStub compiles the stand-in agent CLI (internal/testing/agentstub) once per test run.
func buildStub(t testing.TB) string { return agentstub.Build(t) }

const testMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|------|
| a1a1a1 | TODO | P1 | med | coder |  |  | Implement the retry loop | 2026-11-01 | 2026-11-02 | - |
| b2b2b2 | TODO | P2 | easy | coder |  |  | Document the retry loop | 2026-11-01 | 2026-11-02 | a1a1a1 |
| c3c3c3 | TODO | P0 | easy | coder |  |  | Fix the typo in README | 2026-11-01 | 2026-11-02 |  |
`

// newRepo makes a git repository with an initialized .agent/ workspace,
// committed on main.
func newRepo(t testing.TB) *workspace.Workspace {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, root, "git", "init", "-q", "-b", "main")
	run(t, root, "git", "config", "user.email", "t@example.com")
	run(t, root, "git", "config", "user.name", "T")
	if _, err := tasksvc.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.MatrixPath(), []byte(testMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "commit", "-q", "-m", "init")
	return ws
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// testFleet is a fleet whose runs use the stub agent with env.
func testFleet(t testing.TB, ws *workspace.Workspace, env ...string) *Fleet {
	t.Helper()
	f := New(ws, Options{
		SupervisorArgv: []string{os.Args[0]},
		SupervisorEnv:  []string{"FLEET_TEST_SUPERVISE=1"},
		Binary:         buildStub(t),
		Env:            env,
		KillGrace:      300 * time.Millisecond,
		StopGrace:      300 * time.Millisecond,
	})
	stopRunsAtCleanup(t, f)
	return f
}

// stopRunsAtCleanup ends the runs a test left going before its folders
// are removed (they would write into them meanwhile): fleettest's
// StopRunsAtCleanup, which this package's tests cannot import.
func stopRunsAtCleanup(t testing.TB, f *Fleet) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := fleet.StopEveryRun(ctx, f); err != nil {
			t.Errorf("at the end of the test: %v", err)
		}
	})
}

// waitStatus polls until the agent has one of the statuses.
func waitStatus(t testing.TB, f *Fleet, name string, want ...fleet.Status) fleet.Agent {
	t.Helper()
	var last fleet.Agent
	if poll.Until(poll.Timeout, func() bool {
		var err error
		if last, err = f.Show(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(want, last.Status)
	}) {
		return last
	}
	logs, _ := filepath.Glob(filepath.Join(f.p.runsDir(name), "*.log"))
	var b strings.Builder
	for _, l := range logs {
		c, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s\n%s", filepath.Base(l), c)
	}
	runs, _ := f.finishedRuns(context.Background(), name)
	h, _ := json.MarshalIndent(runs, "", "  ")
	t.Fatalf("agent %s never became %v; last %s (%+v)\nhistory:\n%s\nlogs:\n%s", name, want, last.Status, last.CurrentRun, h, b.String())
	return last
}

func wantCode(t testing.TB, err error, code int, field string) {
	t.Helper()
	var fe *agenterr.Error
	if !errors.As(err, &fe) {
		t.Fatalf("want a fleet error %d (%s), got %v", code, field, err)
	}
	if got := fleet.CodeOf(fe); got != code || (field != "" && fe.Field != field) {
		t.Fatalf("want code %d field %q, got %d (%s) %q: %v", code, field, got, fe.Kind, fe.Field, err)
	}
}

func pidGone(pid int) bool {
	return !pidAlive(pid)
}

func readPid(t testing.TB, path string) int {
	t.Helper()
	var pid int
	poll.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, "no pid in %s", path)
	return pid
}

func waitGone(t testing.TB, pid int) {
	t.Helper()
	if !poll.Until(10*time.Second, func() bool { return pidGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d is still alive: left behind", pid)
	}
}
