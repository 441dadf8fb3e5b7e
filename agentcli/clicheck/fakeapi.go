package clicheck

// The model the protocol check talks to: a minimal fake of the three
// providers' streaming APIs (Anthropic's /v1/messages, OpenAI's
// /v1/responses, gemini's streamGenerateContent), served in this process on
// 127.0.0.1 only. Its one script: a request whose user message carries the
// trigger, and which declares the CLI's shell tool, is answered with a call
// of that tool running the check's command; a request that ends with a
// tool's result is answered "done" (and the result kept); anything else
// "ok".

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// trigger is the word of the check's prompt that makes the fake ask for
// the shell command.
const trigger = "AGENTINFRA-DOCTOR"

type fakeAPI struct {
	srv     *http.Server
	url     string
	command string

	mu       sync.Mutex
	asked    bool   // the tool call was sent
	result   string // the tool's result as the model got it
	resulted bool
}

// serveFake starts the fake model on a loopback port of its own.
func serveFake(command string) (*fakeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the protocol check's fake model cannot listen on 127.0.0.1: %w", err)
	}
	f := &fakeAPI{url: "http://" + ln.Addr().String(), command: command}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve)}
	go f.srv.Serve(ln)
	return f, nil
}

func (f *fakeAPI) Close() { f.srv.Close() }

// toolResult is the tool's result the model was given ("", false before).
func (f *fakeAPI) toolResult() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.result, f.resulted
}

func (f *fakeAPI) toolAsked() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// turn is what the fake read of a request: the tools it declares, the text
// of its last user message, and the tool result it ends with.
type turn struct {
	tools  []string
	user   string
	result *string
}

func (t turn) has(tool string) bool {
	for _, n := range t.tools {
		if n == tool {
			return true
		}
	}
	return false
}

// decide is the script: the tool call (true), or a text.
func (f *fakeAPI) decide(t turn) (call bool, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.result != nil {
		f.result, f.resulted = *t.result, true
		return false, "done"
	}
	if strings.Contains(t.user, trigger) && !f.asked {
		f.asked = true
		return true, ""
	}
	return false, "ok"
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	switch {
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		f.anthropic(w, body)
	case strings.HasSuffix(r.URL.Path, "/v1/responses"):
		f.openai(w, body)
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		f.gemini(w, body)
	default:
		http.NotFound(w, r)
	}
}

func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// text reads a JSON string or an array of {type, text} blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	return strings.Join(out, "\n")
}

func (f *fakeAPI) anthropic(w http.ResponseWriter, body []byte) {
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
	var t turn
	for _, tl := range req.Tools {
		t.tools = append(t.tools, tl.Name)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(req.Messages[i].Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					s := text(b.Content)
					t.result = &s
				}
			}
		}
		t.user = text(req.Messages[i].Content)
		break
	}
	call, reply := f.decide(t)
	call = call && t.has("Bash")
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_doctor", "type": "message", "role": "assistant",
		"model": "agentinfra-doctor", "content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}})
	stop := "end_turn"
	if call {
		input, _ := json.Marshal(map[string]string{"command": f.command, "description": "agentinfra doctor's protocol check"})
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_agentinfra_doctor", "name": "Bash", "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		stop = "tool_use"
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": reply}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func (f *fakeAPI) openai(w http.ResponseWriter, body []byte) {
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
	var t turn
	for _, tl := range req.Tools {
		t.tools = append(t.tools, tl.Name)
	}
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			s := text(it.Output)
			t.result = &s
			break
		}
		if (it.Type == "" || it.Type == "message") && it.Role == "user" {
			t.user = text(it.Content)
			break
		}
	}
	call, reply := f.decide(t)
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_doctor", "object": "response", "status": "in_progress", "output": []any{}}})
	var item map[string]any
	switch {
	case call && t.has("exec_command"):
		item = f.functionCall("exec_command", map[string]any{"cmd": f.command})
	case call && t.has("shell_command"):
		item = f.functionCall("shell_command", map[string]any{"command": f.command})
	case call && t.has("shell"):
		item = f.functionCall("shell", map[string]any{"command": []string{"bash", "-lc", f.command}})
	default:
		if call {
			reply = "no shell tool was declared"
		}
		item = map[string]any{"type": "message", "id": "msg_doctor", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply, "annotations": []any{}}}}
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_doctor", "object": "response", "status": "completed", "output": []any{},
		"usage": map[string]any{"input_tokens": 1, "input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens": 1, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 2}}})
}

func (f *fakeAPI) functionCall(name string, args any) map[string]any {
	a, _ := json.Marshal(args)
	return map[string]any{"type": "function_call", "id": "fc_doctor", "call_id": "call_doctor", "name": name, "arguments": string(a), "status": "completed"}
}

func (f *fakeAPI) gemini(w http.ResponseWriter, body []byte) {
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
	var t turn
	for _, tl := range req.Tools {
		for _, fd := range tl.FunctionDeclarations {
			t.tools = append(t.tools, fd.Name)
		}
	}
	if n := len(req.Contents); n > 0 {
		var texts []string
		for _, p := range req.Contents[n-1].Parts {
			if len(p.FunctionResponse) > 0 {
				s := string(p.FunctionResponse)
				t.result = &s
			} else if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		t.user = strings.Join(texts, "\n")
	}
	call, reply := f.decide(t)
	part := map[string]any{"text": reply}
	if call && t.has("run_shell_command") {
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]string{"command": f.command, "description": "agentinfra doctor's protocol check"}}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP"}},
		"usageMetadata": map[string]int{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}})
}
