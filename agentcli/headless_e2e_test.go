package agentcli

// End-to-end tests of the runners against the REAL agent CLIs (installed by
// scripts/install-tools.sh) talking to fake model servers on 127.0.0.1.
//
// Nothing may leave the machine: each CLI gets a fresh HOME/config dir with
// telemetry, usage statistics, update checks and plugin syncs turned off, and
// HTTP(S)_PROXY point at a trap server that fails the test if anything reaches
// it. The tests also assert that the model call arrived at the fake server, and
// TestRealCLIsConnectOnlyToLoopback runs each CLI under strace and fails on any
// connect() off the loopback (DNS lookups included).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/codex"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
)

// request turns a CLI prepared by fakemodel into a runner request.
func request(c fakemodel.CLI, prompt string) runner.Request {
	return runner.Request{
		Prompt: prompt, Model: c.Model, Dir: c.Dir, Env: c.Env, CleanEnv: true,
		Binary: c.Binary, ExtraArgs: c.ExtraArgs, Timeout: fakemodel.Timeout,
	}
}

func geminiRequest(t *testing.T, baseURL, prompt string) runner.Request {
	return request(fakemodel.Gemini(t, baseURL), prompt)
}

func claudeRequest(t *testing.T, baseURL, prompt string) runner.Request {
	return request(fakemodel.Claude(t, baseURL), prompt)
}

func codexRequest(t *testing.T, baseURL, prompt string) runner.Request {
	return request(fakemodel.Codex(t, baseURL), prompt)
}

func mustOK(t *testing.T, res runner.Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("run failed: %v\nresult: %+v", err, res)
	}
}

func mustFail(t *testing.T, res runner.Result, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, runner.ErrAgentFailed) {
		t.Fatalf("err = %v, want ErrAgentFailed; result %+v", err, res)
	}
	for _, w := range want {
		if !strings.Contains(res.Error, w) {
			t.Errorf("error %q should mention %q", res.Error, w)
		}
	}
	if res.Canceled || res.TimedOut {
		t.Errorf("a failure is neither canceled nor timed out: %+v", res)
	}
}

func TestGeminiRealCLISuccessAndUnknownSession(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewGemini(t, 0)
	req := geminiRequest(t, fake.URL, "-- Implement task T1: say hello (prompt starts with dashes)")

	var kinds []string
	res, err := runner.Exec(context.Background(), gemini.Runner{}, req, func(e runner.Event) { kinds = append(kinds, e.Kind) })
	mustOK(t, res, err)
	if res.Response != "Hello from the fake gemini, turn 1." {
		t.Errorf("response = %q", res.Response)
	}
	if len(res.SessionID) < 8 || res.InputTokens != 123 || res.OutputTokens != 45 || res.Model != "gemini-2.5-flash" {
		t.Errorf("session %q tokens %d/%d model %q", res.SessionID, res.InputTokens, res.OutputTokens, res.Model)
	}
	if !strings.Contains(strings.Join(kinds, ","), "init") || kinds[len(kinds)-1] != "result" {
		t.Errorf("live events = %v", kinds)
	}
	calls := fake.Requests(":streamGenerateContent")
	if len(calls) != 1 {
		t.Fatalf("fake saw %d model calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("model call %s?%s", c.Path, c.Query)
	}
	if c.Header.Get("X-Goog-Api-Key") != "test-gemini-key" {
		t.Errorf("api key header = %q", c.Header.Get("X-Goog-Api-Key"))
	}
	if !strings.Contains(string(c.Body), "Implement task T1: say hello") {
		t.Errorf("the prompt did not reach the model")
	}

	// (Resuming a session is covered through Run in TestRunRealGemini.)
	// Resuming an unknown session is a clear failure, not a new session.
	req.Prompt, req.Session = "continue", "no-such-session"
	res3, err := runner.Exec(context.Background(), gemini.Runner{}, req, nil)
	mustFail(t, res3, err, "exited with code 42")
	if !strings.Contains(err.Error(), "Invalid session identifier") {
		t.Errorf("error lacks gemini's reason: %v", err)
	}
}

func TestGeminiRealCLIToolCall(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewGeminiTool(t, 0, "notes.txt")
	req := geminiRequest(t, fake.URL, "read notes.txt")
	fakemodel.WriteFile(t, filepath.Join(req.Dir, "notes.txt"), "MARKER-7f3a the notes\n")
	var events []runner.Event
	res, err := runner.Exec(context.Background(), gemini.Runner{}, req, func(e runner.Event) { events = append(events, e) })
	mustOK(t, res, err)
	if res.ToolCalls != 1 || res.Response != "Hello from the fake gemini, turn 2." {
		t.Errorf("tool calls %d, response %q", res.ToolCalls, res.Response)
	}
	var seen []string
	for _, e := range events {
		if e.Kind == "tool_use" || e.Kind == "tool_result" {
			seen = append(seen, e.Kind+" "+e.Tool)
		}
	}
	if len(seen) != 2 || seen[0] != "tool_use read_file" || !strings.HasPrefix(seen[1], "tool_result") {
		t.Errorf("tool events %q", seen)
	}
	calls := fake.Requests(":streamGenerateContent")
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "MARKER-7f3a") {
		t.Errorf("the file content did not come back to the model (%d calls)", len(calls))
	}
}

// --- claude ---------------------------------------------------------------

func TestClaudeRealCLISuccessAndResume(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewClaude(t, 0)
	req := claudeRequest(t, fake.URL, "--help me: implement task T2")
	req.SystemPrompt = "You are the coder mode."
	res, err := runner.Exec(context.Background(), claude.Runner{}, req, nil)
	mustOK(t, res, err)
	if res.Response != "Hello from the fake claude." || len(res.SessionID) < 8 {
		t.Errorf("response %q session %q", res.Response, res.SessionID)
	}
	if res.InputTokens != 77 || res.OutputTokens != 12 {
		t.Errorf("tokens %d/%d, want 77/12", res.InputTokens, res.OutputTokens)
	}
	calls := fake.Requests("/v1/messages")
	if len(calls) != 1 {
		t.Fatalf("fake saw %d model calls", len(calls))
	}
	body := string(calls[0].Body)
	if calls[0].Header.Get("X-Api-Key") != "test-claude-key" || !strings.Contains(body, "implement task T2") ||
		!strings.Contains(body, "You are the coder mode.") || !strings.Contains(body, `"claude-sonnet-4-5"`) {
		t.Errorf("model call lacks key, prompt, system prompt or model: key %q", calls[0].Header.Get("X-Api-Key"))
	}

	req.Prompt, req.Session = "next step", res.SessionID
	res2, err := runner.Exec(context.Background(), claude.Runner{}, req, nil)
	mustOK(t, res2, err)
	calls = fake.Requests("/v1/messages")
	if res2.SessionID != res.SessionID || len(calls) != 2 || !strings.Contains(string(calls[1].Body), "implement task T2") {
		t.Errorf("resume: session %q (want %q), %d calls", res2.SessionID, res.SessionID, len(calls))
	}
}

func TestClaudeRealCLIAPIErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   []string
	}{
		// 401 is covered through Run in TestRunRealClaude.
		{500, []string{"API status 500", "fake internal failure"}},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			fake := fakemodel.NewClaude(t, tc.status)
			res, err := runner.Exec(context.Background(), claude.Runner{}, claudeRequest(t, fake.URL, "hello"), nil)
			mustFail(t, res, err, tc.want...)
			if n := len(fake.Requests("/v1/messages")); n != 1 {
				t.Errorf("fake saw %d calls, want 1", n)
			}
		})
	}
}

// --- codex ----------------------------------------------------------------

func TestCodexRealCLISuccessAndResume(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewCodex(t, 0)
	req := codexRequest(t, fake.URL, "-x implement task T3")
	req.SystemPrompt = "You are \"the\" coder mode.\nLine two \\ backslash."
	var kinds []string
	res, err := runner.Exec(context.Background(), codex.Runner{}, req, func(e runner.Event) { kinds = append(kinds, e.Kind) })
	mustOK(t, res, err)
	if res.Response != "Hello from the fake codex." || len(res.SessionID) < 8 {
		t.Errorf("response %q session %q", res.Response, res.SessionID)
	}
	if res.InputTokens != 55 || res.OutputTokens != 8 {
		t.Errorf("tokens %d/%d, want 55/8", res.InputTokens, res.OutputTokens)
	}
	if kinds[0] != "init" || kinds[len(kinds)-1] != "result" {
		t.Errorf("events %v", kinds)
	}
	calls := fake.Requests("/v1/responses")
	if len(calls) != 1 {
		t.Fatalf("fake saw %d model calls", len(calls))
	}
	body := string(calls[0].Body)
	if calls[0].Header.Get("Authorization") != "Bearer test-codex-key" || !strings.Contains(body, "-x implement task T3") ||
		!strings.Contains(body, `You are \"the\" coder mode.\nLine two \\ backslash.`) || !strings.Contains(body, `"gpt-fake"`) {
		t.Errorf("model call lacks key, prompt, developer instructions or model; auth %q", calls[0].Header.Get("Authorization"))
	}
	if strings.Contains(strings.Join(res.Argv, " "), "test-codex-key") {
		t.Errorf("recorded argv leaks the key: %q", res.Argv)
	}

	req.Prompt, req.Session = "second step", res.SessionID
	res2, err := runner.Exec(context.Background(), codex.Runner{}, req, nil)
	mustOK(t, res2, err)
	calls = fake.Requests("/v1/responses")
	if res2.SessionID != res.SessionID || len(calls) != 2 || !strings.Contains(string(calls[1].Body), "implement task T3") {
		t.Errorf("resume: session %q (want %q), %d calls", res2.SessionID, res.SessionID, len(calls))
	}
}

func TestCodexRealCLIAPIErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   []string
	}{
		{401, []string{"401", "Incorrect API key provided (fake)"}},
		{500, []string{"codex: "}},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			fake := fakemodel.NewCodex(t, tc.status)
			res, err := runner.Exec(context.Background(), codex.Runner{}, codexRequest(t, fake.URL, "hello"), nil)
			mustFail(t, res, err, tc.want...)
			if res.ExitCode == 0 {
				t.Errorf("exit code 0 on failure")
			}
			if n := len(fake.Requests("/v1/responses")); n != 1 {
				t.Errorf("fake saw %d calls, want 1 (retries are off)", n)
			}
		})
	}
}

// TestRealCLIsConnectOnlyToLoopback runs each real CLI under strace and fails
// on any connect() to an address off the loopback (a DNS query to the
// resolver counts). It needs strace and skips without it.
func TestRealCLIsConnectOnlyToLoopback(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	cases := []struct {
		cli  string
		make func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server)
	}{
		{runner.CLIGemini, func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewGemini(t, 0)
			req := geminiRequest(t, f.URL, "hello")
			return gemini.Runner{}, req, f
		}},
		{runner.CLIClaude, func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewClaude(t, 0)
			return claude.Runner{}, claudeRequest(t, f.URL, "hello"), f
		}},
		{runner.CLICodex, func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewCodex(t, 0)
			return codex.Runner{}, codexRequest(t, f.URL, "hello"), f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.cli, func(t *testing.T) {
			t.Parallel()
			r, req, fake := tc.make(t)
			logFile := filepath.Join(t.TempDir(), "strace.log")
			req.Wrap = []string{strace, "-f", "-qq", "-e", "trace=connect", "-o", logFile}
			res, err := runner.Exec(context.Background(), r, req, nil)
			mustOK(t, res, err)
			log, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			port := fake.URL[strings.LastIndexByte(fake.URL, ':')+1:]
			if !strings.Contains(string(log), "htons("+port+")") {
				t.Fatalf("strace saw no connect to the fake server on port %s: tracing did not work", port)
			}
			for _, addr := range connectAddrs(string(log)) {
				if !strings.HasPrefix(addr, "127.") && addr != "::1" && !strings.HasPrefix(addr, "::ffff:127.") {
					t.Errorf("%s connected to %s (off the loopback)", tc.cli, addr)
				}
			}
		})
	}
}

// connectAddrs extracts the IPv4/IPv6 addresses of connect() calls from an
// strace log.
func connectAddrs(log string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if !strings.Contains(line, "connect(") {
			continue
		}
		for _, marker := range []string{`inet_addr("`, `inet_pton(AF_INET6, "`} {
			if i := strings.Index(line, marker); i >= 0 {
				rest := line[i+len(marker):]
				if j := strings.IndexByte(rest, '"'); j >= 0 {
					out = append(out, rest[:j])
				}
			}
		}
	}
	return out
}

// --- the role as system prompt ---------------------------------------------

// TestRealCLIsTakeTheRoleAsSystemPrompt: each real CLI sends
// Request.SystemPrompt in the API's system field and not in a user message,
// also when it resumes the session. claude and codex keep their own system
// prompt before it; gemini's GEMINI_SYSTEM_MD replaces its own (the documented
// trade-off: gemini has no way to add to its system instruction).
func TestRealCLIsTakeTheRoleAsSystemPrompt(t *testing.T) {
	t.Parallel()
	const role = "ROLE-MARK-7c1: you are the reviewer. Quote \"this\" \\ and keep\nthe second line."
	cases := []struct {
		cli       string
		modelPath string
		own       string // a phrase of the CLI's own system prompt ("" = replaced)
		make      func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server)
	}{
		{runner.CLIGemini, ":streamGenerateContent", "", func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewGemini(t, 0)
			return gemini.Runner{}, geminiRequest(t, f.URL, "USER-MARK-3b9 review the diff"), f
		}},
		{runner.CLIClaude, "/v1/messages", "You are Claude Code", func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewClaude(t, 0)
			return claude.Runner{}, claudeRequest(t, f.URL, "USER-MARK-3b9 review the diff"), f
		}},
		{runner.CLICodex, "/v1/responses", "You are a coding agent running in the Codex CLI", func(t *testing.T) (runner.Runner, runner.Request, *fakemodel.Server) {
			f := fakemodel.NewCodex(t, 0)
			return codex.Runner{}, codexRequest(t, f.URL, "USER-MARK-3b9 review the diff"), f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.cli, func(t *testing.T) {
			t.Parallel()
			r, req, fake := tc.make(t)
			req.SystemPrompt = role
			res, err := runner.Exec(context.Background(), r, req, nil)
			mustOK(t, res, err)
			if strings.Contains(strings.Join(res.Argv, " "), "ROLE-MARK") && tc.cli != runner.CLICodex {
				t.Errorf("the role is in the recorded argv: %q", res.Argv)
			}
			for i, a := range res.Argv { // claude's file is gone after the run
				if a == "--append-system-prompt-file" {
					if _, err := os.Stat(res.Argv[i+1]); !os.IsNotExist(err) {
						t.Errorf("the system prompt file %s outlived the run (%v)", res.Argv[i+1], err)
					}
				}
			}
			checkRoles(t, fake.Requests(tc.modelPath), role, tc.own)

			// The next task resumes the session: the role is still the system
			// prompt, once, and still not in a user message.
			req.Prompt, req.Session = "USER-MARK-3b9 and the tests", res.SessionID
			res2, err := runner.Exec(context.Background(), r, req, nil)
			mustOK(t, res2, err)
			calls := fake.Requests(tc.modelPath)
			if len(calls) != 2 || res2.SessionID != res.SessionID {
				t.Fatalf("resume: %d calls, session %q want %q", len(calls), res2.SessionID, res.SessionID)
			}
			checkRoles(t, calls[1:], role, tc.own)
		})
	}
}

// checkRoles asserts that each call carries role in its system part, once,
// after the CLI's own system prompt (own; "" when the role replaced it), and
// that no user message carries it.
func checkRoles(t *testing.T, calls []fakemodel.Seen, role, own string) {
	t.Helper()
	if len(calls) == 0 {
		t.Fatal("the fake model saw no call")
	}
	for _, c := range calls {
		r, err := c.Roles()
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(r.System, role); n != 1 {
			t.Errorf("the role is %d times in the system part (want once):\n%s", n, shorten(r.System))
		}
		if strings.Contains(r.User, "ROLE-MARK") {
			t.Errorf("the role reached a user message:\n%s", shorten(r.User))
		}
		if !strings.Contains(r.User, "USER-MARK-3b9") {
			t.Errorf("the prompt is not in a user message:\n%s", shorten(r.User))
		}
		if strings.Contains(r.System, "USER-MARK") {
			t.Errorf("the prompt reached the system part")
		}
		switch i := strings.Index(r.System, own); {
		case own == "":
			if strings.TrimSpace(r.System) != role {
				t.Errorf("gemini's system instruction should be the role alone (GEMINI_SYSTEM_MD replaces it), got:\n%s", shorten(r.System))
			}
		case i < 0:
			t.Errorf("the CLI's own system prompt (%q) is gone:\n%s", own, shorten(r.System))
		case i > strings.Index(r.System, role):
			t.Errorf("the role comes before the CLI's own system prompt instead of after it")
		}
	}
}

func shorten(s string) string {
	if len(s) > 600 {
		return s[:300] + "\n…\n" + s[len(s)-300:]
	}
	return s
}
