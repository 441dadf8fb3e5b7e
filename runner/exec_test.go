package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/codex"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/runner"
)

func stubRequest(bin string, env ...string) runner.Request {
	return runner.Request{
		Prompt:    "do the task",
		Model:     "stub-model",
		Binary:    bin,
		Env:       env,
		KillGrace: 300 * time.Millisecond,
	}
}

func TestExecStubSuccessParsesStreamAndPassesPromptAsOneArgument(t *testing.T) {
	bin := agentstub.Build(t)
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	pwned := filepath.Join(dir, "pwned")
	req := stubRequest(bin, "STUB_MODE=ok", "STUB_RESPONSE=all done", "STUB_ARGSFILE="+argsFile, "MY_API_KEY=sk-live-123")
	req.Prompt = "-v --help; $(touch " + pwned + ") `touch " + pwned + "` 'quoted' \"dq\"\nsecond line"
	req.Session = "abc-123"

	var events []runner.Event
	res, err := runner.Exec(context.Background(), gemini.Runner{}, req, func(e runner.Event) { events = append(events, e) })
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.Response != "all done" || res.SessionID != "stub-session-1" || res.Model != "stub-model" {
		t.Errorf("response/session/model = %q/%q/%q", res.Response, res.SessionID, res.Model)
	}
	if res.InputTokens != 21 || res.OutputTokens != 9 || res.ToolCalls != 1 || res.ExitCode != 0 {
		t.Errorf("tokens %d/%d tools %d exit %d", res.InputTokens, res.OutputTokens, res.ToolCalls, res.ExitCode)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if got, want := strings.Join(kinds, ","), "init,tool_use,tool_result,message,result"; got != want {
		t.Errorf("events = %s, want %s", got, want)
	}
	if events[1].Tool != "read_file" {
		t.Errorf("tool_use event names %q", events[1].Tool)
	}

	raw, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(raw), "\x00")
	if args[0] != "--prompt="+req.Prompt {
		t.Errorf("first argument = %q, want the whole prompt as one --prompt= element", args[0])
	}
	if !strings.Contains(string(raw), "--resume\x00abc-123") {
		t.Errorf("args lack --resume abc-123: %q", args)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the prompt was run through a shell: %s exists", pwned)
	}
	if strings.Contains(strings.Join(res.Argv, " "), "touch") || !strings.HasPrefix(res.Argv[1], "--prompt={prompt: ") {
		t.Errorf("recorded argv should hold a prompt placeholder: %q", res.Argv)
	}
}

func TestExecTimeoutKillsWholeProcessGroup(t *testing.T) {
	bin := agentstub.Build(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	req := stubRequest(bin, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile, "STUB_IGNORE_TERM=1")
	req.Timeout = 700 * time.Millisecond

	res, err := runner.Exec(context.Background(), gemini.Runner{}, req, nil)
	if !errors.Is(err, runner.ErrTimedOut) || !res.TimedOut || res.Canceled {
		t.Fatalf("err = %v, timed_out=%v canceled=%v; want a timeout", err, res.TimedOut, res.Canceled)
	}
	if !strings.Contains(res.Error, "timed out after 700ms") {
		t.Errorf("error = %q", res.Error)
	}
	if !strings.Contains(res.StderrTail, "stub: hanging") {
		t.Errorf("stderr tail = %q", res.StderrTail)
	}
	if res.SessionID != "hang-1" {
		t.Errorf("session from the partial stream = %q", res.SessionID)
	}
	// SIGTERM was ignored, so SIGKILL (after the grace) must have hit the grandchild too.
	agentstub.WaitGone(t, agentstub.ReadPid(t, pidFile))
}

func TestExecCancelKillsWholeProcessGroup(t *testing.T) {
	bin := agentstub.Build(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	req := stubRequest(bin, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := runner.Exec(ctx, gemini.Runner{}, req, func(e runner.Event) {
		if e.Kind == "init" {
			// Cancel once the agent is visibly running and its grandchild's
			// pid is on disk (the stub writes it just after announcing its
			// session), so the test can check the grandchild dies too.
			once.Do(func() { agentstub.CancelOncePidWritten(pidFile, cancel) })
		}
	})
	if !errors.Is(err, runner.ErrCanceled) || !res.Canceled || res.TimedOut {
		t.Fatalf("err = %v, canceled=%v timed_out=%v", err, res.Canceled, res.TimedOut)
	}
	if res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code = %d, want %d (SIGTERM)", res.ExitCode, 128+int(syscall.SIGTERM))
	}
	agentstub.WaitGone(t, agentstub.ReadPid(t, pidFile))
}

func TestExecGarbageAndEmptyOutputAreClearErrors(t *testing.T) {
	bin := agentstub.Build(t)
	for _, tc := range []struct{ mode, want string }{
		{"garbage", "held no JSON result"},
		{"empty", "stdout was empty"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			for _, r := range []runner.Runner{gemini.Runner{}, claude.Runner{}, codex.Runner{}} {
				res, err := runner.Exec(context.Background(), r, stubRequest(bin, "STUB_MODE="+tc.mode), nil)
				if !errors.Is(err, runner.ErrAgentFailed) {
					t.Fatalf("%s: err = %v, want ErrAgentFailed", r.Name(), err)
				}
				if !strings.Contains(res.Error, tc.want) && !strings.Contains(res.Error, "no JSON events") {
					t.Errorf("%s: error = %q, want it to say %q", r.Name(), res.Error, tc.want)
				}
				if res.ExitCode != 0 {
					t.Errorf("%s: exit code %d", r.Name(), res.ExitCode)
				}
			}
		})
	}
}

func TestExecHugeOutputKeepsMemoryBounded(t *testing.T) {
	bin := agentstub.Build(t)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	res, err := runner.Exec(context.Background(), gemini.Runner{}, stubRequest(bin, "STUB_MODE=huge", "STUB_MB=50", "STUB_RESPONSE=after the flood"), nil)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.Response != "after the flood" || res.SessionID != "stub-session-1" {
		t.Errorf("the session after 50 MB of noise was not parsed: %q / %q", res.Response, res.SessionID)
	}
	if res.StdoutBytes < 50<<20 {
		t.Errorf("stdout bytes = %d, want >= 50 MiB", res.StdoutBytes)
	}
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("stdout %d MiB, stderr %d KiB, peak heap growth %d MiB", res.StdoutBytes>>20, res.StderrBytes>>10, grew>>20)
	if grew > 40<<20 {
		t.Errorf("heap grew by %d MiB while reading 50 MiB of output: output is not bounded", grew>>20)
	}
	if !strings.HasSuffix(strings.TrimSpace(res.StderrTail), "stub: end of stderr") || len(res.StderrTail) > runner.StderrTailMax {
		t.Errorf("stderr tail (%d bytes) should end with the last line", len(res.StderrTail))
	}
}

func TestExecCrashAndSignalDeath(t *testing.T) {
	bin := agentstub.Build(t)
	res, err := runner.Exec(context.Background(), gemini.Runner{}, stubRequest(bin, "STUB_MODE=crash", "STUB_EXIT=3"), nil)
	if !errors.Is(err, runner.ErrAgentFailed) || res.ExitCode != 3 {
		t.Fatalf("crash: err = %v, exit %d", err, res.ExitCode)
	}
	if !strings.Contains(res.Error, "exited with code 3") || !strings.Contains(err.Error(), "stub: fatal: something broke") {
		t.Errorf("crash error should give the exit code and the stderr tail: %v", err)
	}
	// The result's error — what the run's record, dispatch's output and
	// the fleet's history say — holds the CLI's own words (issue 30: it
	// said only the exit code).
	if !strings.Contains(res.Error, "gemini said: ") || !strings.Contains(res.Error, "stub: fatal: something broke") {
		t.Errorf("the result's error lacks what the CLI said: %q", res.Error)
	}

	// A credential the CLI echoes never reaches the result or the error.
	res, err = runner.Exec(context.Background(), gemini.Runner{}, stubRequest(bin, "STUB_MODE=crash", "STUB_ECHO_ENV=GEMINI_API_KEY", "GEMINI_API_KEY=AIzaSecretValue123"), nil)
	if strings.Contains(err.Error()+res.StderrTail+res.Error, "AIzaSecretValue123") || !strings.Contains(res.StderrTail, "GEMINI_API_KEY=[REDACTED]") {
		t.Errorf("secret leaked or not redacted: %v\n%s", err, res.StderrTail)
	}

	res, err = runner.Exec(context.Background(), codex.Runner{}, stubRequest(bin, "STUB_MODE=signal"), nil)
	if !errors.Is(err, runner.ErrAgentFailed) || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Fatalf("signal: err = %v, exit %d", err, res.ExitCode)
	}
	if !strings.Contains(res.Error, "killed by signal killed") {
		t.Errorf("signal error = %q", res.Error)
	}
}

func TestExecMissingBinaryAndBadRequest(t *testing.T) {
	res, err := runner.Exec(context.Background(), gemini.Runner{}, runner.Request{Prompt: "x", Model: "m", Binary: filepath.Join(t.TempDir(), "nope")}, nil)
	if !errors.Is(err, runner.ErrAgentFailed) || !strings.Contains(res.Error, "start gemini") {
		t.Errorf("missing binary: err = %v", err)
	}
	_, err = runner.Exec(context.Background(), gemini.Runner{}, runner.Request{Prompt: "x", Model: "m", ApprovalMode: "always"}, nil)
	if err == nil || !strings.Contains(err.Error(), "default, auto_edit, yolo") {
		t.Errorf("bad approval mode: err = %v", err)
	}
	t.Setenv(runner.EnvTools, t.TempDir())
	_, err = runner.Exec(context.Background(), claude.Runner{}, runner.Request{Prompt: "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "install-tools.sh") {
		t.Errorf("missing tool: err = %v", err)
	}
}

func TestExecLongPromptGoesThroughStdin(t *testing.T) {
	// A prompt over the per-argument limit must not become argv (E2BIG).
	bin := agentstub.Build(t)
	prompt := strings.Repeat("p", runner.ArgPromptLimit+10)
	for _, r := range []runner.Runner{gemini.Runner{}, claude.Runner{}, codex.Runner{}} {
		req := stubRequest(bin, "STUB_MODE=stdin")
		req.Prompt = prompt
		c, err := r.Command(req)
		if err != nil {
			t.Fatal(err)
		}
		if c.Stdin != prompt || c.PromptArg != -1 || strings.Contains(strings.Join(c.Argv, " "), "ppppp") {
			t.Fatalf("%s long prompt: argv %q, stdin %d bytes", r.Name(), c.Argv, len(c.Stdin))
		}
	}
	res, err := runner.Exec(context.Background(), codex.Runner{}, func() runner.Request {
		req := stubRequest(bin, "STUB_MODE=stdin")
		req.Prompt = prompt
		return req
	}(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "stdin-" + strconv.Itoa(len(prompt)); res.SessionID != want {
		t.Errorf("child saw %q, want %q", res.SessionID, want)
	}
}

// Exec hands gemini the system prompt in a file only its owner can read,
// outside the prompt and the argv, and removes it when the run ends.
func TestExecWritesPrivateSystemPromptFileAndRemovesIt(t *testing.T) {
	bin := agentstub.Build(t)
	dir := t.TempDir()
	infoFile, argsFile := filepath.Join(dir, "info"), filepath.Join(dir, "args")
	req := stubRequest(bin, "STUB_MODE=ok", "STUB_FILEINFO_ENV=GEMINI_SYSTEM_MD", "STUB_FILEINFO="+infoFile, "STUB_ARGSFILE="+argsFile)
	role := "You review code.\nNever edit files.\n"
	req.SystemPrompt = role
	res, err := runner.Exec(context.Background(), gemini.Runner{}, req, nil)
	if err != nil {
		t.Fatalf("Exec: %v (%+v)", err, res)
	}
	raw, err := os.ReadFile(infoFile)
	if err != nil {
		t.Fatal(err)
	}
	path, rest, _ := strings.Cut(string(raw), "\n")
	perm, content, _ := strings.Cut(rest, "\n")
	if path == "" || perm != "600" || content != role {
		t.Fatalf("the CLI saw GEMINI_SYSTEM_MD=%q with mode %s and content %q; want a 0600 file holding the role", path, perm, content)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the system prompt file %s is still there after the run (%v)", path, err)
	}
	args, _ := os.ReadFile(argsFile)
	if strings.Contains(string(args), "review code") {
		t.Errorf("the role reached the argv: %q", args)
	}
}
