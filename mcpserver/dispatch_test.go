package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/runner"
)

// installStubGemini installs the stub agent CLI as $AGENTINFRA_TOOLS/node_modules/.bin/gemini.
func installStubGemini(t *testing.T, mode string) {
	t.Helper()
	t.Setenv(runner.EnvTools, agentstub.Install(t, t.TempDir(), "gemini"))
	t.Setenv("STUB_MODE", mode)
}

type progress struct {
	mu   sync.Mutex
	msgs []string
	ch   chan struct{}
}

func (p *progress) opts() *mcp.ClientOptions {
	p.ch = make(chan struct{}, 100)
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		p.mu.Lock()
		p.msgs = append(p.msgs, r.Params.Message)
		p.mu.Unlock()
		p.ch <- struct{}{}
	}}
}

func TestDispatchTask(t *testing.T) {
	installStubGemini(t, "ok")
	t.Setenv("STUB_RESPONSE", "Fixed the retry loop.")
	ws := newWorkspace(t, 1)
	var p progress
	_, cs := connect(t, ws, p.opts())
	id := loadTasks(t, ws)[0].ID

	// Dry run: nothing changes.
	before := treeHash(t, ws.Root)
	var o dispatch.Outcome
	callOK(t, cs, "dispatch_task", map[string]any{"id": id, "dry_run": true}, &o)
	if o.Outcome != dispatch.OutcomeDryRun || o.Model == "" || len(o.Argv) == 0 {
		t.Errorf("dry run = %+v", o)
	}
	if treeHash(t, ws.Root) != before {
		t.Fatalf("dry run changed the workspace")
	}

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "dispatch_task",
		Arguments: map[string]any{"id": id}, Meta: mcp.Meta{"progressToken": "p1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("dispatch: %s", text(res))
	}
	if !strings.Contains(text(res), "Fixed the retry loop.") || !strings.Contains(text(res), "REVIEW") {
		t.Errorf("dispatch text: %s", text(res))
	}
	if st := loadTasks(t, ws)[0].Status; st != "REVIEW" {
		t.Errorf("status after a successful dispatch = %s, want REVIEW", st)
	}
	p.mu.Lock()
	got := strings.Join(p.msgs, "\n")
	p.mu.Unlock()
	if len(p.msgs) < 3 || !strings.Contains(got, "read_file") {
		t.Errorf("progress notifications = %q; want lifecycle and tool events", p.msgs)
	}

	// REVIEW → refused again? Only DONE and IN_PROGRESS are; make it DONE.
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "DONE"}, nil)
	res = call(t, cs, "dispatch_task", map[string]any{"id": id})
	if !res.IsError || !strings.HasPrefix(errMessage(t, res), "id: ") || !strings.Contains(text(res), "DONE") {
		t.Errorf("dispatching a DONE task: %s", text(res))
	}
	res = call(t, cs, "dispatch_task", map[string]any{"id": id, "context_files": []string{"/etc/passwd"}})
	if !res.IsError || !strings.HasPrefix(errMessage(t, res), "context_files[0]: ") {
		t.Errorf("context file outside the workspace: %s", text(res))
	}
}

// notifications/cancelled for a dispatch stops the agent's whole process group
// and the task ends BLOCKED.
func TestDispatchTaskCancel(t *testing.T) {
	installStubGemini(t, "hang")
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("STUB_PIDFILE", pidfile)
	ws := newWorkspace(t, 1)
	var p progress
	_, cs := connect(t, ws, p.opts())
	id := loadTasks(t, ws)[0].ID

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dispatch_task",
			Arguments: map[string]any{"id": id}, Meta: mcp.Meta{"progressToken": 7}})
		done <- err
	}()
	// Wait for the agent to be running (its grandchild wrote its pid).
	t.Cleanup(cancel)
	pid := agentstub.ReadPid(t, pidfile)
	cancel() // the client sends notifications/cancelled
	if err := <-done; err == nil {
		t.Errorf("canceled call returned no error")
	}
	// The server finishes its bookkeeping: the row leaves IN_PROGRESS.
	poll.Eventually(t, func() bool { return loadTasks(t, ws)[0].Status != "IN_PROGRESS" }, "the row is still IN_PROGRESS after the cancel")
	if st := loadTasks(t, ws)[0].Status; st != "BLOCKED" {
		t.Errorf("status after cancel = %s, want BLOCKED", st)
	}
	if !poll.Until(3*time.Second, func() bool { return agentstub.ProcessGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("agent grandchild %d still alive after cancel: orphan left behind", pid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.msgs) == 0 {
		t.Errorf("no progress before the cancel")
	}
}

// Issue 18, item 9: through dispatch_task an agent could pass a model (or
// session) that the agent CLI reads as an option, e.g. claude's
// --dangerously-skip-permissions. It is refused before the task is claimed.
func TestDispatchTaskRefusesModelThatLooksLikeAnOption(t *testing.T) {
	installStubGemini(t, "ok")
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[0].ID
	before := treeHash(t, ws.Root)
	for _, args := range []map[string]any{
		{"id": id, "cli": "claude", "model": "--dangerously-skip-permissions"},
		{"id": id, "cli": "gemini", "model": "flash", "session_id": "--yolo"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(text(res), "cannot start with") {
			t.Errorf("%v: %s; want a refusal", args, text(res))
		}
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("a refused dispatch changed the workspace (claimed the task?)")
	}
}
