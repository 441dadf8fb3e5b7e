package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// claudeBridge speaks claude's stream-json control protocol:
//
//	claude -p --input-format stream-json --output-format stream-json --verbose
//	       --permission-prompt-tool stdio [--settings '{"permissions":…}']
//
// The prompt and every later message are `user` lines on stdin; each
// permission request is a control_request can_use_tool, answered with a
// control_response {behavior: allow | deny, message} (the deny message
// reaches the model as the tool's result); control_cancel_request withdraws
// one; an `interrupt` control request stops the turn.
type claudeBridge struct {
	g       *bridge.Gate
	p       *runner.Interactive
	start   time.Time
	stdin   *bridge.Stdin
	parser  runner.Parser
	res     runner.Result
	turns   chan runner.Event
	done    chan struct{}
	cleanup func()
	mu      sync.Mutex
	pending map[string]context.CancelFunc // control request_id → withdraw
	tools   map[string]bridge.Ask         // tool_use id → what it asked
	stopped bool
	seq     int
}

func StartBridge(ctx context.Context, req bridge.Request, g *bridge.Gate) (bridge.Started, error) {
	bin, err := bridge.Binary(req, runner.CLIClaude)
	if err != nil {
		return nil, err
	}
	argv := []string{bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--settings", Settings(g.Policy())}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	spf, cleanup, err := bridge.SystemPromptFile(req)
	if err != nil {
		return nil, err
	}
	if spf != "" {
		argv = append(argv, "--append-system-prompt-file", spf)
	}
	argv = append(argv, req.ExtraArgs...)
	p, err := runner.StartInteractive(argv, req.Dir, req.Env, req.CleanEnv)
	if err != nil {
		cleanup()
		return nil, err
	}
	b := &claudeBridge{g: g, p: p, start: time.Now(), stdin: bridge.NewStdin(p.Stdin), cleanup: cleanup,
		parser: Runner{}.NewParser(runner.Request{Model: req.Model}),
		res:    runner.Result{CLI: runner.CLIClaude, Model: req.Model},
		turns:  make(chan runner.Event, 16), done: make(chan struct{}),
		pending: map[string]context.CancelFunc{}, tools: map[string]bridge.Ask{}}
	go b.read()
	go func() {
		select {
		case <-ctx.Done():
			b.Stop()
		case <-b.done:
		}
	}()
	if err := b.Send(ctx, req.Prompt); err != nil {
		b.Stop()
		return nil, err
	}
	return b, nil
}

func (b *claudeBridge) write(v any) error { return b.stdin.Write(v) }

func (b *claudeBridge) Send(ctx context.Context, text string) error {
	return b.write(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "parent_tool_use_id": nil, "session_id": ""})
}

func (b *claudeBridge) Interrupt(ctx context.Context) error {
	b.mu.Lock()
	b.seq++
	id := fmt.Sprintf("agentinfra-int-%d", b.seq)
	b.mu.Unlock()
	return b.write(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}})
}

func (b *claudeBridge) TurnEnded() <-chan runner.Event { return b.turns }

func (b *claudeBridge) Close() error { return b.stdin.Close() }

func (b *claudeBridge) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.Close()
	b.p.Stop(b.g.KillGrace())
}

func (b *claudeBridge) Wait() (runner.Result, error) {
	<-b.done
	defer b.cleanup()
	b.parser.Finish(&b.res, nil, nil)
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	err := bridge.Finish(&b.res, b.start, b.p, stopped)
	return b.res, err
}

type claudeControl struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Message   *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type canUseTool struct {
	Subtype   string          `json:"subtype"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

func (b *claudeBridge) read() {
	defer close(b.done)
	defer b.withdrawAll()
	sc := bufio.NewScanner(b.p.Stdout)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		line := sc.Bytes()
		for _, ev := range b.parser.Line(line) {
			b.g.Event(ev)
			if ev.Kind == "result" {
				select {
				case b.turns <- ev:
				default:
				}
			}
		}
		var c claudeControl
		if json.Unmarshal(line, &c) != nil {
			continue
		}
		switch c.Type {
		case "control_request":
			var r canUseTool
			json.Unmarshal(c.Request, &r)
			if r.Subtype == "can_use_tool" {
				b.ask(c.RequestID, r)
			}
		case "control_cancel_request":
			b.mu.Lock()
			if cancel := b.pending[c.RequestID]; cancel != nil {
				cancel()
			}
			b.mu.Unlock()
		case "assistant", "user":
			b.toolBlocks(c)
		}
	}
	io.Copy(io.Discard, b.p.Stdout)
}

// toolBlocks remembers tool calls, and records those that ran without a
// request (claude's own rules, or the native rules agentinfra gave it).
func (b *claudeBridge) toolBlocks(c claudeControl) {
	if c.Message == nil {
		return
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if json.Unmarshal(c.Message.Content, &blocks) != nil {
		return
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_use":
			b.mu.Lock()
			b.tools[bl.ID] = b.askOf(bl.Name, bl.Input, bl.ID)
			b.mu.Unlock()
		case "tool_result":
			b.mu.Lock()
			a, ok := b.tools[bl.ToolUseID]
			b.mu.Unlock()
			if ok {
				b.g.RanWithoutAsking(bl.ToolUseID, a)
			}
		}
	}
}

func (b *claudeBridge) askOf(tool string, input json.RawMessage, id string) bridge.Ask {
	var in struct {
		Command    string  `json:"command"`
		FilePath   string  `json:"file_path"`
		Path       string  `json:"path"`
		OldString  *string `json:"old_string"`
		NewString  string  `json:"new_string"`
		Content    *string `json:"content"`
		ReplaceAll bool    `json:"replace_all"`
		URL        string  `json:"url"`
	}
	json.Unmarshal(input, &in)
	a := bridge.Ask{NativeID: id, Tool: tool, ToolInput: string(input)}
	root := b.g.Root()
	switch tool {
	case "Bash":
		a.Kind, a.Command, a.Title = store.KindCommand, in.Command, "Run "+in.Command
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		a.Kind, a.File, a.Title = store.KindEdit, in.FilePath, "Edit "+in.FilePath
		switch {
		case in.Content != nil:
			a.Diff = bridge.EditDiff(root, in.FilePath, nil, *in.Content, false)
		case in.OldString != nil:
			a.Diff = bridge.EditDiff(root, in.FilePath, in.OldString, in.NewString, in.ReplaceAll)
		}
	case "WebFetch":
		a.Kind, a.URL, a.Title = store.KindFetch, in.URL, "Fetch "+in.URL
	default:
		a.Kind, a.Title = store.KindTool, "Use "+tool
		if f := in.FilePath + in.Path; f != "" {
			a.File, a.Title = f, tool+" "+f
		}
	}
	return a
}

func (b *claudeBridge) ask(requestID string, r canUseTool) {
	ctx, cancel := context.WithCancel(context.Background())
	b.mu.Lock()
	b.pending[requestID] = cancel
	b.mu.Unlock()
	a := b.askOf(r.ToolName, r.Input, r.ToolUseID)
	go func() {
		defer func() {
			b.mu.Lock()
			delete(b.pending, requestID)
			b.mu.Unlock()
			cancel()
		}()
		ans := b.g.Decide(ctx, a)
		if ctx.Err() != nil {
			return // withdrawn: claude expects no answer
		}
		resp := map[string]any{"behavior": "deny", "message": ans.Message}
		if ans.Allow {
			resp = map[string]any{"behavior": "allow", "updatedInput": json.RawMessage(r.Input)}
		}
		b.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": requestID, "response": resp}})
	}()
}

func (b *claudeBridge) withdrawAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.pending {
		cancel()
	}
}

func (b *claudeBridge) Process() *runner.Interactive { return b.p }
