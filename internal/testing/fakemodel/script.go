package fakemodel

// Scripted fakes: a model whose answer to each request is decided by a Script
// from what the request carries, so that end-to-end tests can make a real CLI
// run a shell command (and so ask for permission), answer a nudge, or end a
// turn with a question. Each provider's fake speaks its own streaming API and
// uses the shell tool its CLI declares in the request (gemini
// run_shell_command, claude Bash, codex exec_command / shell_command / shell).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Ask is what a scripted fake sees of one request.
type Ask struct {
	// N counts the requests this fake answered before this one (0 first).
	N int
	// User is the text of the last user message; "" when the request ends
	// with a tool result.
	User string
	// ToolResult is the text of the tool result the request ends with; set
	// only when ToolCall is true.
	ToolResult string
	ToolCall   bool
	// Tools names the tools the request declares.
	Tools []string
	Body  []byte
}

// Answer is what a scripted fake answers: a shell command for the CLI to run
// (through its own shell tool), or else Text.
type Answer struct {
	Shell string
	// Write makes the CLI write a file through its own file tool (claude
	// Write, gemini write_file): an edit, which asks for approval.
	Write *FileWrite
	// Call makes the CLI call one of its tools by name with an input (claude
	// Read, gemini read_file, codex exec_command …), when the request
	// declares it: what a test of a particular tool needs.
	Call *ToolCall
	Text string
	// Delay holds the answer back (a model that thinks for a while).
	Delay time.Duration
}

// FileWrite is a file a scripted fake has the CLI write.
type FileWrite struct {
	Path    string // absolute (claude and gemini want one)
	Content string
}

// ToolCall is a tool call a scripted fake makes: the tool's name as the
// CLI declares it and its input.
type ToolCall struct {
	Name  string
	Input map[string]any
}

// Script decides the answer to each request.
type Script func(Ask) Answer

// ShellOnce is the script of the approval tests: a user message that
// contains trigger is answered with the shell command; anything else (the
// tool's result, a later message) with reply.
func ShellOnce(trigger, command, reply string) Script {
	return func(a Ask) Answer {
		if !a.ToolCall && strings.Contains(a.User, trigger) {
			return Answer{Shell: command}
		}
		return Answer{Text: reply}
	}
}

// HasTool tells whether the request declares the named tool.
func (a Ask) HasTool(name string) bool {
	for _, t := range a.Tools {
		if t == name {
			return true
		}
	}
	return false
}

type scripted struct {
	n     atomic.Int64
	calls atomic.Int64
}

func (s *scripted) next() int           { return int(s.n.Add(1) - 1) }
func (s *scripted) callID() int64       { return s.calls.Add(1) }
func stamp() int64                      { return time.Now().UnixNano() % 1_000_000_000 }
func quoteJSON(v any) string            { b, _ := json.Marshal(v); return string(b) }
func delay(a Answer)                    { time.Sleep(a.Delay) }
func textOf(raw json.RawMessage) string { return flexText(raw) }

// --- gemini ---

// NewGeminiScript answers streamGenerateContent as script says; a shell
// answer is a run_shell_command function call.
func NewGeminiScript(t testing.TB, script Script) *Server {
	s := &scripted{}
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text             string          `json:"text"`
					FunctionResponse json.RawMessage `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
			Tools []struct {
				FunctionDeclarations []struct {
					Name string `json:"name"`
				} `json:"functionDeclarations"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		ask := Ask{N: s.next(), Body: body}
		for _, tl := range req.Tools {
			for _, f := range tl.FunctionDeclarations {
				ask.Tools = append(ask.Tools, f.Name)
			}
		}
		if n := len(req.Contents); n > 0 {
			last := req.Contents[n-1]
			var texts []string
			for _, p := range last.Parts {
				if len(p.FunctionResponse) > 0 {
					ask.ToolCall = true
					ask.ToolResult += string(p.FunctionResponse)
				} else if p.Text != "" {
					texts = append(texts, p.Text)
				}
			}
			if !ask.ToolCall {
				ask.User = strings.Join(texts, "\n")
			}
		}
		ans := script(ask)
		delay(ans)
		w.Header().Set("Content-Type", "text/event-stream")
		fn, args := "", any(nil)
		switch {
		case ans.Call != nil && ask.HasTool(ans.Call.Name):
			fn, args = ans.Call.Name, ans.Call.Input
		case ans.Write != nil && ask.HasTool("write_file"):
			fn, args = "write_file", map[string]string{"file_path": ans.Write.Path, "content": ans.Write.Content}
		case ans.Shell != "" && ask.HasTool("run_shell_command"):
			fn, args = "run_shell_command", map[string]string{"command": ans.Shell, "description": "run " + ans.Shell}
		}
		if fn != "" {
			sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":%q,"args":%s}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`, fn, quoteJSON(args)))
			return
		}
		sse(w, "", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":%s}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`, quoteJSON(ans.Text)))
	})
}

// --- claude ---

// NewClaudeScript answers /v1/messages as script says; a shell answer is a
// Bash tool_use.
func NewClaudeScript(t testing.TB, script Script) *Server {
	s := &scripted{}
	start := stamp()
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		ask := Ask{N: s.next(), Body: body}
		for _, tl := range req.Tools {
			ask.Tools = append(ask.Tools, tl.Name)
		}
		// The last user message (claude may end a request with a system
		// message: its environment).
		lastUser := -1
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				lastUser = i
				break
			}
		}
		if lastUser >= 0 {
			last := req.Messages[lastUser].Content
			var blocks []struct {
				Type    string          `json:"type"`
				Text    string          `json:"text"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(last, &blocks) == nil {
				var texts []string
				for _, b := range blocks {
					switch b.Type {
					case "tool_result":
						ask.ToolCall = true
						ask.ToolResult += textOf(b.Content)
					case "text":
						texts = append(texts, b.Text)
					}
				}
				if !ask.ToolCall {
					ask.User = strings.Join(texts, "\n")
				}
			} else {
				ask.User = textOf(last)
			}
		}
		ans := script(ask)
		delay(ans)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"id":"msg_fake1","type":"message","role":"assistant","model":"claude-fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":77,"output_tokens":1}}}`)
		tool, input := "", ""
		switch {
		case ans.Call != nil && ask.HasTool(ans.Call.Name):
			tool, input = ans.Call.Name, quoteJSON(ans.Call.Input)
		case ans.Write != nil && ask.HasTool("Write"):
			tool, input = "Write", quoteJSON(map[string]string{"file_path": ans.Write.Path, "content": ans.Write.Content})
		case ans.Shell != "" && ask.HasTool("Bash"):
			tool, input = "Bash", quoteJSON(map[string]string{"command": ans.Shell, "description": "run " + ans.Shell})
		}
		if tool != "" {
			id := fmt.Sprintf("toolu_fake%d_%d", start, s.callID())
			sse(w, "content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, id, tool))
			sse(w, "content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%s}}`, quoteJSON(input)))
			sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
			sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`)
			sse(w, "message_stop", `{"type":"message_stop"}`)
			return
		}
		sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		sse(w, "content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, quoteJSON(ans.Text)))
		sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`)
		sse(w, "message_stop", `{"type":"message_stop"}`)
	})
}

// --- codex ---

// NewCodexScript answers /v1/responses as script says; a shell answer is a
// function call of the shell tool the request declares.
func NewCodexScript(t testing.TB, script Script) *Server {
	s := &scripted{}
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasSuffix(r.URL.Path, "/v1/responses") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
				Output  json.RawMessage `json:"output"`
			} `json:"input"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		ask := Ask{N: s.next(), Body: body}
		for _, tl := range req.Tools {
			ask.Tools = append(ask.Tools, tl.Name)
		}
		// The request ends with the tool's output, or with user messages
		// (codex may send environment context as a user message of its own).
		for i := len(req.Input) - 1; i >= 0; i-- {
			it := req.Input[i]
			if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
				ask.ToolCall, ask.ToolResult = true, textOf(it.Output)
				break
			}
			if (it.Type == "" || it.Type == "message") && it.Role == "user" {
				ask.User = textOf(it.Content)
				break
			}
		}
		ans := script(ask)
		delay(ans)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "response.created", `{"type":"response.created","response":{"id":"resp_fake1","object":"response","status":"in_progress","output":[]}}`)
		name, args := codexShell(ask, ans.Shell)
		if ans.Call != nil && ask.HasTool(ans.Call.Name) {
			name, args = ans.Call.Name, quoteJSON(ans.Call.Input)
		}
		if name != "" {
			item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", s.callID()), "call_id": fmt.Sprintf("call_fake_%d", s.calls.Load()),
				"name": name, "arguments": args, "status": "completed"}
			sse(w, "response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":0,"item":%s}`, quoteJSON(item)))
		} else {
			sse(w, "response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_fake1","role":"assistant","status":"completed","content":[{"type":"output_text","text":%s,"annotations":[]}]}}`, quoteJSON(ans.Text)))
		}
		sse(w, "response.completed", `{"type":"response.completed","response":{"id":"resp_fake1","object":"response","status":"completed","output":[],"usage":{"input_tokens":55,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":63}}}`)
	})
}

// codexShell is the function call for command with the shell tool the
// request declares (codex 0.169 declares exec_command).
func codexShell(a Ask, command string) (name, args string) {
	if command == "" {
		return "", ""
	}
	switch {
	case a.HasTool("exec_command"):
		return "exec_command", quoteJSON(map[string]string{"cmd": command})
	case a.HasTool("shell_command"):
		return "shell_command", quoteJSON(map[string]string{"command": command})
	case a.HasTool("shell"):
		return "shell", quoteJSON(map[string][]string{"command": {"bash", "-lc", command}})
	}
	return "", ""
}
