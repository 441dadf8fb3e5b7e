package dispatch

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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/e2etools"
)

const e2eTimeout = 120 * time.Second

// realCLI returns the installed CLI (see e2etools.Bin).
func realCLI(t *testing.T, name string) string { return e2etools.Bin(t, name) }

type seenRequest struct {
	Method, Host, Path, Query string
	Header                    http.Header
	Body                      []byte
}

// fakeServer records every request and answers with handle.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seenRequest
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seenRequest{r.Method, r.Host, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		f.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests(pathSuffix string) []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenRequest
	for _, r := range f.reqs {
		if strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

// proxyTrap is where HTTP(S)_PROXY point: any request reaching it means a CLI
// tried to talk to something other than the fake model server.
func proxyTrap(t *testing.T) []string {
	trap := newFake(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Error(w, "agentinfra test: outbound traffic is not allowed", http.StatusForbidden)
	})
	t.Cleanup(func() {
		trap.mu.Lock()
		defer trap.mu.Unlock()
		for _, r := range trap.reqs {
			t.Errorf("a CLI tried to reach the outside through the proxy: %s %s%s", r.Method, r.Host, r.Path)
		}
	})
	return []string{
		"HTTP_PROXY=" + trap.URL, "HTTPS_PROXY=" + trap.URL, "ALL_PROXY=" + trap.URL,
		"http_proxy=" + trap.URL, "https_proxy=" + trap.URL, "all_proxy=" + trap.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
}

// baseEnv is the clean environment every real CLI runs in.
func baseEnv(t *testing.T, home string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"NO_COLOR=1",
		"CI=1",
		"LANG=C.UTF-8",
	}
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(env, proxyTrap(t)...)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sse(w http.ResponseWriter, event, data string) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func jsonError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"code":%d,"message":%q,"status":%q,"type":%q}}`, status, msg, typ, typ)
}

func mustOK(t *testing.T, res Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("run failed: %v\nresult: %+v", err, res)
	}
}

func mustFail(t *testing.T, res Result, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrAgentFailed) {
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

// --- gemini ---------------------------------------------------------------

type geminiFake struct {
	*fakeServer
	status int // 0 = answer
	// toolFile, when set, makes the first answer a read_file call for it; the
	// answer after the tool result is text.
	toolFile string
}

func newGeminiFake(t *testing.T, status int) *geminiFake { return newGeminiFakeTool(t, status, "") }

func newGeminiFakeTool(t *testing.T, status int, toolFile string) *geminiFake {
	g := &geminiFake{status: status, toolFile: toolFile}
	g.fakeServer = newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			http.NotFound(w, r)
			return
		}
		switch g.status {
		case 0:
		case 401:
			jsonError(w, 401, "UNAUTHENTICATED", "API key not valid (fake)")
			return
		default:
			jsonError(w, g.status, "INTERNAL", "fake internal failure")
			return
		}
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"contents"`
		}
		json.Unmarshal(body, &req)
		turns := 0
		for _, c := range req.Contents {
			if c.Role == "model" {
				turns++
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if g.toolFile != "" && !strings.Contains(string(body), `"functionResponse"`) {
			sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"file_path":%q}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`, g.toolFile))
			return
		}
		sse(w, "", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello from the fake "}]}}]}`)
		sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":"gemini, turn %d."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":123,"candidatesTokenCount":45,"totalTokenCount":168}}`, turns+1))
	})
	return g
}

func geminiRequest(t *testing.T, baseURL, prompt string) (Request, string) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"maxAttempts": 1, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}`)
	work := t.TempDir()
	env := append(baseEnv(t, home),
		"GEMINI_CLI_HOME="+home,
		"GEMINI_API_KEY=test-gemini-key",
		"GOOGLE_GEMINI_BASE_URL="+baseURL,
	)
	return Request{
		Prompt: prompt, Model: "gemini-2.5-flash", Dir: work, Env: env, CleanEnv: true,
		Binary: realCLI(t, CLIGemini), Timeout: e2eTimeout,
	}, home
}

func TestGeminiRealCLISuccessAndUnknownSession(t *testing.T) {
	t.Parallel()
	fake := newGeminiFake(t, 0)
	req, _ := geminiRequest(t, fake.URL, "-- Implement task T1: say hello (prompt starts with dashes)")

	var kinds []string
	res, err := Exec(context.Background(), GeminiRunner{}, req, func(e Event) { kinds = append(kinds, e.Kind) })
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
	calls := fake.requests(":streamGenerateContent")
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
	res3, err := Exec(context.Background(), GeminiRunner{}, req, nil)
	mustFail(t, res3, err, "exited with code 42")
	if !strings.Contains(err.Error(), "Invalid session identifier") {
		t.Errorf("error lacks gemini's reason: %v", err)
	}
}

func TestGeminiRealCLIToolCall(t *testing.T) {
	t.Parallel()
	fake := newGeminiFakeTool(t, 0, "notes.txt")
	req, _ := geminiRequest(t, fake.URL, "read notes.txt")
	writeFile(t, filepath.Join(req.Dir, "notes.txt"), "MARKER-7f3a the notes\n")
	var events []Event
	res, err := Exec(context.Background(), GeminiRunner{}, req, func(e Event) { events = append(events, e) })
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
	calls := fake.requests(":streamGenerateContent")
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "MARKER-7f3a") {
		t.Errorf("the file content did not come back to the model (%d calls)", len(calls))
	}
}

// --- claude ---------------------------------------------------------------

func newClaudeFake(t *testing.T, status int) *fakeServer {
	return newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		switch status {
		case 0:
		case 401:
			jsonError(w, 401, "authentication_error", "invalid x-api-key (fake)")
			return
		default:
			jsonError(w, status, "api_error", "fake internal failure")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"id":"msg_fake1","type":"message","role":"assistant","model":"claude-fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":77,"output_tokens":1}}}`)
		sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		sse(w, "ping", `{"type":"ping"}`)
		sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from "}}`)
		sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the fake claude."}}`)
		sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`)
		sse(w, "message_stop", `{"type":"message_stop"}`)
	})
}

func claudeRequest(t *testing.T, baseURL, prompt string) Request {
	home := t.TempDir()
	env := append(baseEnv(t, home),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=test-claude-key",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	)
	return Request{
		Prompt: prompt, Model: "claude-sonnet-4-5", Dir: t.TempDir(), Env: env, CleanEnv: true,
		Binary: realCLI(t, CLIClaude), Timeout: e2eTimeout,
	}
}

func TestClaudeRealCLISuccessAndResume(t *testing.T) {
	t.Parallel()
	fake := newClaudeFake(t, 0)
	req := claudeRequest(t, fake.URL, "--help me: implement task T2")
	req.SystemPrompt = "You are the coder mode."
	res, err := Exec(context.Background(), ClaudeRunner{}, req, nil)
	mustOK(t, res, err)
	if res.Response != "Hello from the fake claude." || len(res.SessionID) < 8 {
		t.Errorf("response %q session %q", res.Response, res.SessionID)
	}
	if res.InputTokens != 77 || res.OutputTokens != 12 {
		t.Errorf("tokens %d/%d, want 77/12", res.InputTokens, res.OutputTokens)
	}
	calls := fake.requests("/v1/messages")
	if len(calls) != 1 {
		t.Fatalf("fake saw %d model calls", len(calls))
	}
	body := string(calls[0].Body)
	if calls[0].Header.Get("X-Api-Key") != "test-claude-key" || !strings.Contains(body, "implement task T2") ||
		!strings.Contains(body, "You are the coder mode.") || !strings.Contains(body, `"claude-sonnet-4-5"`) {
		t.Errorf("model call lacks key, prompt, system prompt or model: key %q", calls[0].Header.Get("X-Api-Key"))
	}

	req.Prompt, req.Session = "next step", res.SessionID
	res2, err := Exec(context.Background(), ClaudeRunner{}, req, nil)
	mustOK(t, res2, err)
	calls = fake.requests("/v1/messages")
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
			fake := newClaudeFake(t, tc.status)
			res, err := Exec(context.Background(), ClaudeRunner{}, claudeRequest(t, fake.URL, "hello"), nil)
			mustFail(t, res, err, tc.want...)
			if n := len(fake.requests("/v1/messages")); n != 1 {
				t.Errorf("fake saw %d calls, want 1", n)
			}
		})
	}
}

// --- codex ----------------------------------------------------------------

func newCodexFake(t *testing.T, status int) *fakeServer {
	return newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, "/v1/responses") {
			http.NotFound(w, r)
			return
		}
		switch status {
		case 0:
		case 401:
			jsonError(w, 401, "invalid_api_key", "Incorrect API key provided (fake)")
			return
		default:
			jsonError(w, status, "server_error", "fake internal failure")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "response.created", `{"type":"response.created","response":{"id":"resp_fake1","object":"response","status":"in_progress","output":[]}}`)
		sse(w, "response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_fake1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello from the fake codex.","annotations":[]}]}}`)
		sse(w, "response.completed", `{"type":"response.completed","response":{"id":"resp_fake1","object":"response","status":"completed","output":[],"usage":{"input_tokens":55,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":63}}}`)
	})
}

func codexRequest(t *testing.T, baseURL, prompt string) Request {
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	// Off: analytics, update checks, and the curated-plugin/app syncs that
	// otherwise reach github.com and chatgpt.com at startup; no retries.
	writeFile(t, filepath.Join(codexHome, "config.toml"), `check_for_update_on_startup = false
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
`)
	env := append(baseEnv(t, home), "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=test-codex-key")
	return Request{
		Prompt: prompt, Model: "gpt-fake", Dir: t.TempDir(), Env: env, CleanEnv: true,
		Binary: realCLI(t, CLICodex), Timeout: e2eTimeout,
		ExtraArgs: []string{
			"-c", "model_provider=fake",
			"-c", "model_providers.fake.name=fake",
			"-c", "model_providers.fake.base_url=" + baseURL + "/v1",
			"-c", "model_providers.fake.wire_api=responses",
			"-c", "model_providers.fake.env_key=FAKE_OPENAI_KEY",
			"-c", "model_providers.fake.request_max_retries=0",
			"-c", "model_providers.fake.stream_max_retries=0",
		},
	}
}

func TestCodexRealCLISuccessAndResume(t *testing.T) {
	t.Parallel()
	fake := newCodexFake(t, 0)
	req := codexRequest(t, fake.URL, "-x implement task T3")
	req.SystemPrompt = "You are \"the\" coder mode.\nLine two \\ backslash."
	var kinds []string
	res, err := Exec(context.Background(), CodexRunner{}, req, func(e Event) { kinds = append(kinds, e.Kind) })
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
	calls := fake.requests("/v1/responses")
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
	res2, err := Exec(context.Background(), CodexRunner{}, req, nil)
	mustOK(t, res2, err)
	calls = fake.requests("/v1/responses")
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
			fake := newCodexFake(t, tc.status)
			res, err := Exec(context.Background(), CodexRunner{}, codexRequest(t, fake.URL, "hello"), nil)
			mustFail(t, res, err, tc.want...)
			if res.ExitCode == 0 {
				t.Errorf("exit code 0 on failure")
			}
			if n := len(fake.requests("/v1/responses")); n != 1 {
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
		make func(t *testing.T) (Runner, Request, *fakeServer)
	}{
		{CLIGemini, func(t *testing.T) (Runner, Request, *fakeServer) {
			f := newGeminiFake(t, 0)
			req, _ := geminiRequest(t, f.URL, "hello")
			return GeminiRunner{}, req, f.fakeServer
		}},
		{CLIClaude, func(t *testing.T) (Runner, Request, *fakeServer) {
			f := newClaudeFake(t, 0)
			return ClaudeRunner{}, claudeRequest(t, f.URL, "hello"), f
		}},
		{CLICodex, func(t *testing.T) (Runner, Request, *fakeServer) {
			f := newCodexFake(t, 0)
			return CodexRunner{}, codexRequest(t, f.URL, "hello"), f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.cli, func(t *testing.T) {
			t.Parallel()
			r, req, fake := tc.make(t)
			logFile := filepath.Join(t.TempDir(), "strace.log")
			req.Wrap = []string{strace, "-f", "-qq", "-e", "trace=connect", "-o", logFile}
			res, err := Exec(context.Background(), r, req, nil)
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
