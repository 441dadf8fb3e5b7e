package execute_test

// One table of run endings, each played through dispatch (the synchronous
// caller) and through the fleet (the detached one, its supervisor a
// separate process): both leave the same matrix, byte for byte, and the
// same status log in the task's README — the task lifecycle is one.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/local/localtest"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// lifecycleNow is the clock of both callers, the supervisor's included.
var lifecycleNow = time.Date(2026, 11, 21, 12, 30, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	// The test binary doubles as the fleet's supervisor, as `agentinfra
	// agent run-supervisor` would be, on the same clock.
	if os.Getenv("LIFECYCLE_SUPERVISE") == "1" {
		os.Exit(localtest.Supervise(os.Args[1:], local.Options{Now: func() time.Time { return lifecycleNow }}))
	}
	os.Exit(m.Run())
}

const lifecycleMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1a1a1 | TODO | P1 | med | coder |  | @alice | Implement the retry loop | 2026-11-01 | 2026-11-02 |
`

// lifecycleRepo is a git repository with a workspace holding one TODO task
// with its folder, the same bytes every time.
func lifecycleRepo(t *testing.T, config string) *workspace.Workspace {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "t@example.com")
	git("config", "user.name", "T")
	if _, err := task.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(root)
	files := map[string]string{ws.MatrixPath(): lifecycleMatrix}
	if config != "" {
		files[filepath.Join(ws.AgentDir(), "config.yaml")] = config
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := task.ScaffoldTask(context.Background(), ws, "a1a1a1", task.ScaffoldOptions{}, lifecycleNow); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	return ws
}

// outcome is what a caller left: the matrix and the task README.
type outcome struct{ matrix, readme string }

func read(t *testing.T, ws *workspace.Workspace) outcome {
	t.Helper()
	m, err := os.ReadFile(ws.MatrixPath())
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := ws.FindTaskDir("a1a1a1")
	r, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return outcome{string(m), string(r)}
}

func TestLifecycleIsTheSameThroughDispatchAndTheFleet(t *testing.T) {
	stub := agentstub.Build(t)
	cases := []struct {
		name    string
		env     []string
		timeout time.Duration
		// status and the README lines both callers must write.
		status string
		log    []string
	}{
		{"success", []string{"STUB_MODE=ok"}, time.Minute, "REVIEW", []string{
			"- 2026-11-21 12:30: status TODO → IN_PROGRESS by @coder",
			"- 2026-11-21 12:30: status IN_PROGRESS → REVIEW by @coder: completed",
		}},
		{"agent fails", []string{"STUB_MODE=crash", "STUB_EXIT=7"}, time.Minute, "BLOCKED", []string{
			"- 2026-11-21 12:30: status TODO → IN_PROGRESS by @coder",
			"- 2026-11-21 12:30: status IN_PROGRESS → BLOCKED by @coder: gemini exited with code 7; gemini said: stub: fatal: something broke",
		}},
		{"timeout", []string{"STUB_MODE=hang", "STUB_PIDFILE=" + filepath.Join(t.TempDir(), "pid")}, time.Second, "BLOCKED", []string{
			"- 2026-11-21 12:30: status TODO → IN_PROGRESS by @coder",
			"- 2026-11-21 12:30: status IN_PROGRESS → BLOCKED by @coder: timed out: gemini timed out after 1s; its process group was killed",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Through dispatch.
			dws := lifecycleRepo(t, "")
			before := read(t, dws)
			_, err := dispatch.Run(context.Background(), dws, dispatch.Options{
				ID: "a1a1a1", CLI: "gemini", Binary: stub, Env: c.env, Timeout: c.timeout, KillGrace: 200 * time.Millisecond,
				Now: func() time.Time { return lifecycleNow }, Getenv: func(string) string { return "" },
			}, nil)
			if c.status == "REVIEW" && err != nil {
				t.Fatalf("dispatch: %v", err)
			}
			viaDispatch := read(t, dws)

			// Through the fleet: agent "coder" (so its @mention is the
			// mode's, as dispatch's), its run under a supervisor process.
			fws := lifecycleRepo(t, fmt.Sprintf("fleet:\n  timeout: %s\n", c.timeout))
			f := local.New(fws, local.Options{
				SupervisorArgv: []string{os.Args[0]}, SupervisorEnv: []string{"LIFECYCLE_SUPERVISE=1"},
				Binary: stub, Env: c.env, KillGrace: 200 * time.Millisecond, StopGrace: 200 * time.Millisecond,
				Now: func() time.Time { return lifecycleNow }, Getenv: func(string) string { return "" },
			})
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				fleet.StopEveryRun(ctx, f)
			})
			ctx := context.Background()
			if _, err := f.Create(ctx, fleet.CreateInput{Name: "coder", Spec: "keep the tests green"}); err != nil {
				t.Fatal(err)
			}
			waitIdle(t, f)
			if _, err := f.Start(ctx, fleet.StartInput{Name: "coder", TaskID: "a1a1a1"}); err != nil {
				t.Fatal(err)
			}
			waitIdle(t, f)
			viaFleet := read(t, fws)
			// The fleet's run worked in the agent's worktree on its branch:
			// its end records the task's change (package review) in the
			// README's Review section, which dispatch, working in the
			// workspace itself, has no branch for.
			var reviewed string
			viaFleet.readme, reviewed, _ = strings.Cut(viaFleet.readme, "\n## Review\n")
			if want := c.status == "REVIEW"; strings.Contains(reviewed, "change recorded (round 1) at the end of run coder-2") != want {
				t.Errorf("the fleet's README records the change: %v, want %v:\n%s", !want, want, reviewed)
			}

			if viaDispatch.matrix != viaFleet.matrix {
				t.Errorf("the matrix differs:\ndispatch:\n%s\nfleet:\n%s", viaDispatch.matrix, viaFleet.matrix)
			}
			if viaDispatch.readme != viaFleet.readme {
				t.Errorf("the README differs:\ndispatch:\n%s\nfleet:\n%s", viaDispatch.readme, viaFleet.readme)
			}
			wantRow := strings.Replace(lifecycleMatrix, "| a1a1a1 | TODO | P1 | med | coder |  | @alice | Implement the retry loop | 2026-11-01 | 2026-11-02 |",
				"| a1a1a1 | "+c.status+" | P1 | med | coder |  | @alice @coder | Implement the retry loop | 2026-11-01 | 2026-11-21 |", 1)
			if viaDispatch.matrix != wantRow {
				t.Errorf("the matrix after the run:\n%s\nwant:\n%s", viaDispatch.matrix, wantRow)
			}
			if want := before.readme + strings.Join(c.log, "\n") + "\n"; viaDispatch.readme != want {
				t.Errorf("the README's status log:\n%s\nwant:\n%s", viaDispatch.readme, want)
			}
		})
	}
}

func waitIdle(t *testing.T, f *local.Fleet) {
	t.Helper()
	poll.EventuallyNil(t, func() error {
		a, err := f.Show(context.Background(), "coder")
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != fleet.StatusIdle {
			return fmt.Errorf("agent coder is still %s", a.Status)
		}
		return nil
	})
}
