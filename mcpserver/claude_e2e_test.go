package mcpserver

import (
	"context"
	"encoding/json"
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
)

// fakeAnthropicAPI plays the model for Claude Code: it asks for the MCP task
// tool (mcp__agentinfra__task, list TODO), then answers with a text.
type fakeAnthropicAPI struct {
	mu         sync.Mutex
	declared   []string
	called     bool
	toolResult string
}

const claudeTaskTool = "mcp__agentinfra__task"

func (f *fakeAnthropicAPI) handler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		f.mu.Lock()
		offered := false
		for _, tl := range req.Tools {
			if !strings.Contains(strings.Join(f.declared, ","), tl.Name) {
				f.declared = append(f.declared, tl.Name)
			}
			offered = offered || tl.Name == claudeTaskTool
		}
		var result string
		for _, m := range req.Messages {
			var blocks []map[string]json.RawMessage
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if string(b["type"]) == `"tool_result"` {
					result = string(b["content"])
				}
			}
		}
		if result != "" {
			f.toolResult = result
		}
		callTool := offered && result == ""
		if callTool {
			f.called = true
		}
		f.mu.Unlock()

		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"msg_side","type":"message","role":"assistant","model":"claude-fake","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
		}
		ev("message_start", `{"type":"message_start","message":{"id":"msg_fake","type":"message","role":"assistant","model":"claude-fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
		if callTool {
			ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_fake1","name":%q,"input":{}}}`, claudeTaskTool))
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"action\":\"list\",\"status\":\"TODO\"}"}}`)
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`)
		} else {
			text := "No task tool was offered."
			if result != "" {
				text = "The task tool answered."
			}
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text))
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
		}
		ev("message_stop", `{"type":"message_stop"}`)
	}
}

// The real Claude Code, given agentinfra as an MCP server (--mcp-config),
// starts `agentinfra serve`, offers mcp__agentinfra__task to the model (a
// fake Anthropic API on 127.0.0.1), calls it and hands the rows back.
func TestClaudeCodeDrivesMCPServer(t *testing.T) {
	if os.Getenv("AGENTINFRA_E2E") != "1" {
		t.Skip("a real Claude Code session: set AGENTINFRA_E2E=1")
	}
	claude := toolsBin(t, "claude")
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 2)
	rows := loadTasks(t, ws)

	fake := &fakeAnthropicAPI{}
	api := httptest.NewServer(fake.handler())
	defer api.Close()

	home := t.TempDir()
	cfg := map[string]any{"mcpServers": map[string]any{"agentinfra": map[string]any{
		"command": bin, "args": []string{"serve"},
		"env": map[string]string{"AGENTINFRA_ROOT": ws.Root, "AGENTINFRA_GLOBAL_SKILLS": "/nonexistent-global-skills"},
	}}}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(home, "mcp.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "List my TODO tasks.", "--output-format", "json",
		"--model", "claude-sonnet-4-5", "--mcp-config", cfgPath, "--strict-mcp-config",
		"--allowedTools", claudeTaskTool)
	cmd.Dir = ws.Root
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0", "NO_COLOR=1", "CI=1",
		"ENABLE_TOOL_SEARCH=false", // offer MCP tools directly instead of behind ToolSearch
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	out, err := cmd.Output()
	stderr := ""
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	if err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	t.Logf("MCP tools offered to the model: %v", mcpOnly(fake.declared))
	for _, want := range []string{"task", "task_get_context", "format_prompt", "skill", "select_model", "handoff_generate", "dispatch_task"} {
		if !strings.Contains(","+strings.Join(fake.declared, ",")+",", ",mcp__agentinfra__"+want+",") {
			t.Errorf("claude did not offer mcp__agentinfra__%s: %v", want, fake.declared)
		}
	}
	if !fake.called {
		t.Fatalf("the model never got the task tool; stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	for _, r := range rows {
		if !strings.Contains(fake.toolResult, r.ID) {
			t.Errorf("the tool result claude returned to the model lacks task %s: %s", r.ID, fake.toolResult)
		}
	}
	var res struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if json.Unmarshal(out, &res) != nil || res.IsError || !strings.Contains(res.Result, "The task tool answered.") {
		t.Errorf("claude result: %s", out)
	}
}

func mcpOnly(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "mcp__") {
			out = append(out, n)
		}
	}
	return out
}
