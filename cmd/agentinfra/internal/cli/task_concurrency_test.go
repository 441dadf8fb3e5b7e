package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/testbin"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// taskBinary is agentinfra built for the tests that need real processes
// (package testbin: once per source tree).
func taskBinary(t *testing.T) string { return testbin.Path(t, testbin.Agentinfra) }

// TestCLIConcurrentCreateAndUpdate runs N `task create` and N `task update`
// processes at once against one workspace: every create lands with a unique
// ID and a folder, every update lands, and the file stays valid.
// By default 20+20 processes (every one waits on the matrix lock, so 40
// is a race already, in a few seconds on 2 cores); AGENTINFRA_STRESS=1
// runs 200+200 on a 1,000-row matrix.
func TestCLIConcurrentCreateAndUpdate(t *testing.T) {
	n, extraRows, wait := 20, 0, 60*time.Second
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		// Every write is serialized: 400 of them on a loaded machine can take minutes.
		n, extraRows, wait = 200, 1000, 5*time.Minute
	}
	bin := taskBinary(t)
	root := t.TempDir()
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(root)
	if extraRows > 0 {
		var b strings.Builder
		b.WriteString(readText(t, ws.MatrixPath()))
		for i := 0; i < extraRows; i++ {
			fmt.Fprintf(&b, "| f%05x | TODO | P3 | easy | explorer |  |  | Filler row %d | 2026-01-01 | 2026-01-01 |\n", i, i)
		}
		if err := os.WriteFile(ws.MatrixPath(), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	existing := make([]string, n)
	for i := range existing {
		c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: fmt.Sprintf("existing %d", i), Mode: "coder"}, taskNow)
		if err != nil {
			t.Fatal(err)
		}
		existing[i] = c.Task.ID
	}

	type result struct {
		args   []string
		out    string
		stderr string
		err    error
	}
	results := make(chan result, 2*n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	launch := func(args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(cctx, bin, args...)
			cmd.Dir = root
			// A loaded CI machine can make 100 serialized fsyncs outlast the
			// default 10 s lock wait; waiting longer is what a user would do.
			cmd.Env = append(os.Environ(), "AGENTINFRA_ROOT="+root, "NO_COLOR=1", task.EnvLockTimeout+"="+wait.String())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			results <- result{args, string(out), stderr.String(), err}
		}()
	}
	for i := 0; i < n; i++ {
		launch("task", "create", "--description", fmt.Sprintf("concurrent %d", i), "--mode", "coder", "--json")
		launch("task", "update", existing[i], "--status", "DONE", "--agent", fmt.Sprintf("@worker-%d", i))
	}
	began := time.Now()
	close(start)
	wg.Wait()
	close(results)
	t.Logf("%d processes in %v", 2*n, time.Since(began))

	created := map[string]string{} // id → description
	for r := range results {
		if r.err != nil {
			t.Errorf("%v: %v\n%s", r.args, r.err, r.stderr)
			continue
		}
		if r.args[1] != "create" {
			continue
		}
		var js struct {
			Task matrix.Task `json:"task"`
			Dir  string      `json:"dir"`
		}
		if err := json.Unmarshal([]byte(r.out), &js); err != nil {
			t.Errorf("%v printed %q: %v", r.args, r.out, err)
			continue
		}
		if prev, dup := created[js.Task.ID]; dup {
			t.Errorf("ID %s handed out twice (%q and %q)", js.Task.ID, prev, js.Task.Description)
		}
		created[js.Task.ID] = js.Task.Description
		if !isFile(filepath.Join(root, js.Dir, "README.md")) {
			t.Errorf("create %s: no README in %s", js.Task.ID, js.Dir)
		}
	}
	if len(created) != n {
		t.Errorf("%d creates reported, want %d", len(created), n)
	}

	d := matrix.Parse([]byte(readText(t, ws.MatrixPath())))
	if ds := task.Validate(ws, d, "DEVELOPMENT_MATRIX.md", func(string) string { return "" }); len(ds) > 0 {
		t.Errorf("matrix does not validate cleanly: %v", ds)
	}
	if got, want := len(d.Tasks()), 2*n+extraRows; got != want {
		t.Errorf("matrix has %d rows, want %d", got, want)
	}
	for id, desc := range created {
		tk, ok := d.Task(id)
		if !ok || tk.Description != desc || tk.Status != "TODO" {
			t.Errorf("created row %s lost or wrong: %+v", id, tk)
		}
	}
	for i, id := range existing {
		tk, _ := d.Task(id)
		if tk.Status != "DONE" || strings.Join(tk.Agents, " ") != fmt.Sprintf("@worker-%d", i) {
			t.Errorf("update of %s lost: %+v", id, tk)
		}
		dir, _ := ws.FindTaskDir(id)
		if c := strings.Count(readText(t, filepath.Join(dir, "README.md")), "status TODO → DONE"); c != 1 {
			t.Errorf("README of %s has %d status lines, want 1", id, c)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(ws.TasksDir(), ".*")); len(left) > 0 {
		t.Errorf("temporary files left in tasks/: %v", left)
	}
	entries, _ := os.ReadDir(ws.TasksDir())
	if len(entries) != 2*n {
		t.Errorf("%d task folders, want %d", len(entries), 2*n)
	}
}

// TestCLIConcurrentClaimOneWinner runs 20 `task claim` processes of one TODO
// task by 20 agents at once: exactly one wins (exit 0), the others exit 1
// naming the winner, the matrix validates, and the README logs one claim.
func TestCLIConcurrentClaimOneWinner(t *testing.T) {
	const n = 20
	bin := taskBinary(t)
	root := t.TempDir()
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(root)
	c, err := task.CreateTask(ctx, ws, task.CreateOptions{Description: "contended", Mode: "coder"}, taskNow)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		agent, out, stderr string
		code               int
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("@agent-%02d", i)
			<-start
			cmd := exec.CommandContext(ctx, bin, "task", "claim", c.Task.ID, "--agent", agent)
			cmd.Env = append(os.Environ(), "AGENTINFRA_ROOT="+root, "NO_COLOR=1", task.EnvLockTimeout+"=60s")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, _ := cmd.Output()
			results <- result{agent, string(out), stderr.String(), cmd.ProcessState.ExitCode()}
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	var winners []string
	var refused []result
	for r := range results {
		switch r.code {
		case 0:
			winners = append(winners, r.agent)
			if want := fmt.Sprintf("claimed %s for %s: status TODO → IN_PROGRESS\n", c.Task.ID, r.agent); r.out != want {
				t.Errorf("winner printed %q, want %q", r.out, want)
			}
		case 4: // conflict: another agent holds it
			refused = append(refused, r)
		default:
			t.Errorf("%s: exit %d, stderr %q", r.agent, r.code, r.stderr)
		}
	}
	if len(winners) != 1 || len(refused) != n-1 {
		t.Fatalf("winners %v, %d refused; want one winner", winners, len(refused))
	}
	for _, r := range refused {
		if want := fmt.Sprintf("error: task %s is IN_PROGRESS, held by %s\n", c.Task.ID, winners[0]); r.stderr != want {
			t.Errorf("%s: stderr %q, want %q", r.agent, r.stderr, want)
		}
	}
	d := matrix.Parse([]byte(readText(t, ws.MatrixPath())))
	if ds := task.Validate(ws, d, "DEVELOPMENT_MATRIX.md", func(string) string { return "" }); len(ds) > 0 {
		t.Errorf("matrix does not validate cleanly: %v", ds)
	}
	if tk, _ := d.Task(c.Task.ID); tk.Status != "IN_PROGRESS" || strings.Join(tk.Agents, " ") != winners[0] {
		t.Errorf("row after the claims: %+v", tk)
	}
	if got := strings.Count(readText(t, filepath.Join(c.Dir, "README.md")), "status TODO → IN_PROGRESS"); got != 1 {
		t.Errorf("README has %d TODO → IN_PROGRESS lines, want 1", got)
	}
}
