// Package fakemodel serves fake model APIs on 127.0.0.1 — gemini's
// streamGenerateContent, Anthropic's /v1/messages and OpenAI's /v1/responses,
// all as SSE — and prepares the real agent CLIs to talk to them and to nothing
// else: a fresh home per run with telemetry, usage statistics, update checks
// and plugin syncs off, no retries, and HTTP(S)_PROXY pointing at a trap that
// fails the test when anything reaches it. For the end-to-end tests of the
// runner, dispatch and the MCP server.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// Timeout bounds one run of a real CLI in the tests.
const Timeout = 120 * time.Second

// CLI is how to start one real agent CLI against a fake server: the runner
// request (or dispatch options) take these fields as they are, with a clean
// environment.
type CLI struct {
	Binary    string
	Model     string
	Dir       string // an empty working directory
	Env       []string
	ExtraArgs []string
	Home      string // the CLI's fresh home (settings, sessions)
}

// Seen is one request a fake server received.
type Seen struct {
	Method, Host, Path, Query string
	Header                    http.Header
	Body                      []byte
}

// Server records every request and answers with handle.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Seen
}

func newServer(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *Server {
	f := &Server{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, Seen{r.Method, r.Host, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		f.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// Requests returns the requests whose path ends with pathSuffix.
func (f *Server) Requests(pathSuffix string) []Seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Seen
	for _, r := range f.reqs {
		if strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

// proxyTrap is where HTTP(S)_PROXY point: any request reaching it means a CLI
// tried to talk to something other than the fake model server.
func proxyTrap(t testing.TB) []string {
	trap := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
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
func baseEnv(t testing.TB, home string) []string {
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

// WriteFile writes a file, creating its folder.
func WriteFile(t testing.TB, path, content string) {
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

// --- gemini ---

// NewGemini answers streamGenerateContent with two text deltas ("Hello from
// the fake gemini, turn N."), or with the error of status (401, or any other).
func NewGemini(t testing.TB, status int) *Server { return NewGeminiTool(t, status, "") }

// NewGeminiTool is NewGemini whose first answer, when toolFile is set, is a
// read_file call for it; the answer after the tool result is text.
func NewGeminiTool(t testing.TB, status int, toolFile string) *Server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			http.NotFound(w, r)
			return
		}
		switch status {
		case 0:
		case 401:
			jsonError(w, 401, "UNAUTHENTICATED", "API key not valid (fake)")
			return
		default:
			jsonError(w, status, "INTERNAL", "fake internal failure")
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
		if toolFile != "" && !strings.Contains(string(body), `"functionResponse"`) {
			sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"file_path":%q}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`, toolFile))
			return
		}
		sse(w, "", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello from the fake "}]}}]}`)
		sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":"gemini, turn %d."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":123,"candidatesTokenCount":45,"totalTokenCount":168}}`, turns+1))
	})
}

// Gemini prepares the real gemini CLI to talk to the fake at baseURL.
func Gemini(t testing.TB, baseURL string) CLI {
	home := t.TempDir()
	WriteFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
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
	return CLI{Model: "gemini-2.5-flash", Dir: work, Env: env, Binary: e2etools.Bin(t, "gemini"), Home: home}
}

// NewClaude answers /v1/messages with "Hello from the fake claude.", or the
// error of status.
func NewClaude(t testing.TB, status int) *Server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
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

// Claude prepares the real claude CLI to talk to the fake at baseURL.
func Claude(t testing.TB, baseURL string) CLI {
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
	return CLI{Model: "claude-sonnet-4-5", Dir: t.TempDir(), Env: env, Binary: e2etools.Bin(t, "claude"), Home: home}
}

// NewCodex answers /v1/responses with "Hello from the fake codex.", or the
// error of status.
func NewCodex(t testing.TB, status int) *Server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
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

// Codex prepares the real codex CLI to talk to the fake at baseURL.
func Codex(t testing.TB, baseURL string) CLI {
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	// Off: analytics, update checks, and the curated-plugin/app syncs that
	// otherwise reach github.com and chatgpt.com at startup; no retries.
	WriteFile(t, filepath.Join(codexHome, "config.toml"), `check_for_update_on_startup = false
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
`)
	env := append(baseEnv(t, home), "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=test-codex-key")
	return CLI{
		Model: "gpt-fake", Dir: t.TempDir(), Env: env, Binary: e2etools.Bin(t, "codex"), Home: home,
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
