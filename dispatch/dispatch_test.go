package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

func TestRunSuccessMovesTaskToReviewAndRecordsEverything(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)

	var mu sync.Mutex
	var events []runner.Event
	out, err := Run(context.Background(), ws, stubOptions(bin, "a1a1a1", "STUB_MODE=ok", "STUB_RESPONSE=Implemented; tests pass.", "SERVICE_TOKEN=tok-123"), func(e runner.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	after := readMatrix(t, ws)
	checkMatrix(t, before, after, "a1a1a1")
	task := taskOf(t, ws, "a1a1a1")
	if task.Status != "REVIEW" || strings.Join(task.Agents, " ") != "@alice @coder" || task.Updated != "2026-11-21" {
		t.Errorf("row after: status %s agents %v updated %s", task.Status, task.Agents, task.Updated)
	}
	if out.Outcome != OutcomeSuccess || out.StatusBefore != "TODO" || out.StatusAfter != "REVIEW" {
		t.Errorf("outcome %s, status %s → %s", out.Outcome, out.StatusBefore, out.StatusAfter)
	}
	// The starter coder mode names no tier: difficulty med → the fast tier.
	if out.Model != prompt.DefaultModelFast || !strings.Contains(out.ModelReason, "difficulty med and mode coder") {
		t.Errorf("model %q reason %q", out.Model, out.ModelReason)
	}
	wantTracking := ".agent/tasks/a1a1a1_implement-the-retry-loop/tracking/20261121T123000Z_dispatch.md"
	if out.TrackingFile != wantTracking || out.ResultFile != strings.TrimSuffix(wantTracking, "_dispatch.md")+"_result.json" {
		t.Errorf("files %q %q", out.TrackingFile, out.ResultFile)
	}

	note := readRel(t, ws, out.TrackingFile)
	for _, want := range []string{
		"# Dispatch of a1a1a1", "- Model: gemini-2.5-flash — difficulty med and mode coder",
		"- Status: TODO → IN_PROGRESS", "--prompt={prompt: ", "SERVICE_TOKEN=[REDACTED]",
		"## Prompt", "Retry 3 times with backoff.", // the README made it into the exact prompt
		"## Result", "- Outcome: success", "- Status: IN_PROGRESS → REVIEW", "- Session: stub-session-1",
		"- Tokens: 21 in, 9 out", "- Tool calls: 1", "Implemented; tests pass.",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("tracking note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "tok-123") {
		t.Error("the tracking note leaks a secret")
	}
	if !strings.Contains(note, out.Prompt) {
		t.Error("the tracking note does not hold the exact prompt")
	}

	var rec struct {
		Outcome     string        `json:"outcome"`
		StatusAfter string        `json:"status_after"`
		Result      runner.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(readRel(t, ws, out.ResultFile)), &rec); err != nil {
		t.Fatalf("result json: %v", err)
	}
	if rec.Outcome != "success" || rec.StatusAfter != "REVIEW" || rec.Result.Response != "Implemented; tests pass." || rec.Result.SessionID != "stub-session-1" {
		t.Errorf("result json = %+v", rec)
	}

	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, ","); got != "dispatch,dispatch,init,tool_use,tool_result,message,result,dispatch" {
		t.Errorf("events = %s", got)
	}
}

func TestRunAgentFailureBlocksTaskWithReason(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)
	opts := stubOptions(bin, "a1a1a1", "STUB_MODE=crash", "STUB_EXIT=7")
	out, err := Run(context.Background(), ws, opts, nil)
	if !errors.Is(err, runner.ErrAgentFailed) {
		t.Fatalf("err = %v, want runner.ErrAgentFailed", err)
	}
	checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
	if st := taskOf(t, ws, "a1a1a1").Status; st != "BLOCKED" || out.StatusAfter != "BLOCKED" || out.Outcome != OutcomeFailed {
		t.Errorf("status %s / %s, outcome %s", st, out.StatusAfter, out.Outcome)
	}
	note := readRel(t, ws, out.TrackingFile)
	for _, want := range []string{"- Outcome: failed", "- Status: IN_PROGRESS → BLOCKED", "- Reason: gemini exited with code 7", "- Exit code: 7", "### stderr (tail)", "stub: fatal: something broke"} {
		if !strings.Contains(note, want) {
			t.Errorf("tracking note lacks %q:\n%s", want, note)
		}
	}
}

func TestRunTimeoutAndCancelAreRecorded(t *testing.T) {
	bin := agentstub.Build(t)
	t.Run("timeout", func(t *testing.T) {
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		pidFile := filepath.Join(t.TempDir(), "pid")
		opts := stubOptions(bin, "a1a1a1", "STUB_MODE=hang", "STUB_PIDFILE="+pidFile)
		opts.Timeout = 600 * time.Millisecond
		out, err := Run(context.Background(), ws, opts, nil)
		if !errors.Is(err, runner.ErrTimedOut) || out.Outcome != OutcomeTimedOut {
			t.Fatalf("err = %v, outcome %s", err, out.Outcome)
		}
		agentstub.WaitGone(t, agentstub.ReadPid(t, pidFile))
		checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
		if st := taskOf(t, ws, "a1a1a1").Status; st != "BLOCKED" {
			t.Errorf("status %s", st)
		}
		if note := readRel(t, ws, out.TrackingFile); !strings.Contains(note, "- Outcome: timed_out") || !strings.Contains(note, "timed out after 600ms") {
			t.Errorf("tracking note:\n%s", note)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		pidFile := filepath.Join(t.TempDir(), "pid")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var once sync.Once
		out, err := Run(ctx, ws, stubOptions(bin, "a1a1a1", "STUB_MODE=hang", "STUB_PIDFILE="+pidFile), func(e runner.Event) {
			if e.Kind == "init" {
				// like Ctrl-C or an MCP cancellation once the agent runs
				once.Do(func() { agentstub.CancelOncePidWritten(pidFile, cancel) })
			}
		})
		if !errors.Is(err, runner.ErrCanceled) || out.Outcome != OutcomeCanceled {
			t.Fatalf("err = %v, outcome %s", err, out.Outcome)
		}
		agentstub.WaitGone(t, agentstub.ReadPid(t, pidFile))
		// The bookkeeping ran although ctx was canceled.
		checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
		if st := taskOf(t, ws, "a1a1a1").Status; st != "BLOCKED" {
			t.Errorf("status %s", st)
		}
		if note := readRel(t, ws, out.TrackingFile); !strings.Contains(note, "- Outcome: canceled") {
			t.Errorf("tracking note:\n%s", note)
		}
		if _, err := os.Stat(filepath.Join(ws.Root, out.ResultFile)); err != nil {
			t.Errorf("no result file after cancel: %v", err)
		}
	})
}

func TestRunRefusesDoneAndInProgressUnlessForced(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)
	for _, id := range []string{"b2b2b2", "c3c3c3"} {
		_, err := Run(context.Background(), ws, stubOptions(bin, id, "STUB_MODE=ok"), nil)
		var ref *agenterr.Error
		if !errors.Is(err, ErrRefused) || !errors.As(err, &ref) || ref.Kind != agenterr.Refused || ref.Override != "force" {
			t.Errorf("%s: err = %v, want a refusal with the override force", id, err)
		}
	}
	if !bytes.Equal(before, readMatrix(t, ws)) {
		t.Fatal("a refused dispatch changed the matrix")
	}
	if entries, _ := os.ReadDir(ws.TasksDir()); len(entries) != 1 {
		t.Errorf("a refused dispatch created task folders: %v", entries)
	}

	// Forced: the DONE task runs; it had no folder, so one is made for the note.
	opts := stubOptions(bin, "b2b2b2", "STUB_MODE=ok")
	opts.Force = true
	out, err := Run(context.Background(), ws, opts, nil)
	if err != nil {
		t.Fatalf("forced: %v", err)
	}
	checkMatrix(t, before, readMatrix(t, ws), "b2b2b2")
	if out.StatusBefore != "DONE" || taskOf(t, ws, "b2b2b2").Status != "REVIEW" {
		t.Errorf("forced: %s → %s", out.StatusBefore, taskOf(t, ws, "b2b2b2").Status)
	}
	if !strings.HasPrefix(out.TrackingFile, ".agent/tasks/b2b2b2_finished_work/tracking/") {
		t.Errorf("tracking file %q", out.TrackingFile)
	}
	// A second dispatch in the same second gets its own note.
	mid := readMatrix(t, ws)
	out2, err := Run(context.Background(), ws, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, mid, readMatrix(t, ws), "")
	if out2.TrackingFile == out.TrackingFile || !strings.HasSuffix(out2.TrackingFile, "-2_dispatch.md") {
		t.Errorf("second note %q (first %q)", out2.TrackingFile, out.TrackingFile)
	}
}

func TestRunDryRunChangesNothingAndShowsTheCommand(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	unchanged := treehash.Guard(t, ws.Root)
	opts := stubOptions(bin, "a1a1a1", "STUB_MODE=ok", "OPENAI_API_KEY=sk-secret")
	opts.DryRun = true
	opts.Mode = "oracle"
	opts.Session = "sess-9"
	opts.ApprovalMode = runner.ApprovalAutoEdit
	opts.TaskOverride = "Only write the design note."
	out, err := Run(context.Background(), ws, opts, func(e runner.Event) { t.Errorf("dry run emitted %v", e) })
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	unchanged()
	if out.Outcome != OutcomeDryRun || out.Result != nil || out.TrackingFile != "" {
		t.Errorf("outcome %s result %v tracking %q", out.Outcome, out.Result, out.TrackingFile)
	}
	// The prompt is the one a dispatch would send: the row as claimed.
	if !strings.Contains(out.Prompt, "- Status: IN_PROGRESS\n") || !strings.Contains(out.Prompt, "- Agents: @alice, @oracle\n") {
		t.Errorf("the dry run's prompt does not show the claimed row:\n%s", out.Prompt)
	}
	// oracle is a planning mode: difficulty med → deep.
	if out.Mode != "oracle" || out.Model != prompt.DefaultModelDeep || !strings.Contains(out.ModelReason, "oracle") {
		t.Errorf("mode %s model %s reason %q", out.Mode, out.Model, out.ModelReason)
	}
	argv := strings.Join(out.Argv, " ")
	for _, want := range []string{"gemini --prompt={prompt: ", "-m gemini-2.5-pro", "--approval-mode auto_edit", "--resume sess-9", "--skip-trust"} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv %q lacks %q", argv, want)
		}
	}
	if strings.Join(out.Env, " ") != "STUB_MODE=ok OPENAI_API_KEY=[REDACTED]" {
		t.Errorf("env additions %q", out.Env)
	}
	if out.PromptBytes == 0 || out.PromptBytes != len(out.Prompt) || !strings.Contains(out.Prompt, "Only write the design note.") || len(out.PromptParts) == 0 {
		t.Errorf("prompt %d bytes, parts %v", out.PromptBytes, out.PromptParts)
	}
	if out.Binary != bin || out.StatusBefore != "TODO" || out.StatusAfter != "TODO" {
		t.Errorf("binary %q status %s → %s", out.Binary, out.StatusBefore, out.StatusAfter)
	}
}

func TestRunBadInputs(t *testing.T) {
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{ID: "a1a1a2"}, "did you mean a1a1a1"},
		{Options{ID: ""}, "no task ID"},
		{Options{ID: "a1a1a1", CLI: "cursor"}, "gemini, claude, codex"},
		{Options{ID: "a1a1a1", ApprovalMode: "always"}, "default, auto_edit, yolo"},
	} {
		_, err := Run(context.Background(), ws, tc.opts, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if !bytes.Equal(before, readMatrix(t, ws)) {
		t.Error("bad input changed the matrix")
	}
}

func TestRunClaudeAndCodexModelChoice(t *testing.T) {
	ws := dispatchWorkspace(t)
	for _, cli := range []string{runner.CLIClaude, runner.CLICodex} {
		out, err := Run(context.Background(), ws, Options{ID: "a1a1a1", CLI: cli, DryRun: true, Binary: "/bin/true", Getenv: func(string) string { return "" }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Model != "" || !strings.Contains(out.ModelReason, cli+"'s default model") || strings.Contains(strings.Join(out.Argv, " "), "gemini-") {
			t.Errorf("%s: model %q reason %q argv %q", cli, out.Model, out.ModelReason, out.Argv)
		}
		out, err = Run(context.Background(), ws, Options{ID: "a1a1a1", CLI: cli, Model: "my-model", DryRun: true, Binary: "/bin/true"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Model != "my-model" || !strings.Contains(strings.Join(out.Argv, " "), "my-model") {
			t.Errorf("%s explicit: model %q argv %q", cli, out.Model, out.Argv)
		}
	}
}

func TestRunKeepsAStatusTheAgentSetDuringTheRun(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)
	out, err := Run(context.Background(), ws, stubOptions(bin, "a1a1a1", "STUB_MODE=ok"), func(e runner.Event) {
		if e.Kind == "init" { // the agent reports BLOCKED itself, as the protocol asks
			if _, err := tasksvc.SetStatus(context.Background(), ws, "a1a1a1", "BLOCKED", fixedNow); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
	if st := taskOf(t, ws, "a1a1a1").Status; st != "BLOCKED" || out.StatusAfter != "BLOCKED" || out.Outcome != OutcomeSuccess {
		t.Errorf("status %s / %s, outcome %s", st, out.StatusAfter, out.Outcome)
	}
	if note := readRel(t, ws, out.TrackingFile); !strings.Contains(note, "changed to BLOCKED during the run; kept it instead of REVIEW") {
		t.Errorf("tracking note:\n%s", note)
	}
}

func TestRunConcurrentDispatchesOfOneTaskOnlyOneRuns(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	before := readMatrix(t, ws)
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Run(context.Background(), ws, stubOptions(bin, "a1a1a1", "STUB_MODE=ok", "STUB_SLEEP_MS=800"), nil)
		}()
	}
	wg.Wait()
	ran, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ran++
		case errors.Is(err, ErrRefused):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ran != 1 || refused != n-1 {
		t.Errorf("%d ran, %d refused; want exactly one run", ran, refused)
	}
	checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
	notes, _ := filepath.Glob(filepath.Join(ws.TasksDir(), "a1a1a1_*", "tracking", "*_dispatch.md"))
	if len(notes) != 1 {
		t.Errorf("%d dispatch notes, want 1", len(notes))
	}
}
