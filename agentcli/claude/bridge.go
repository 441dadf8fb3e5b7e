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
//	       --permission-prompt-tool stdio --setting-sources "" --strict-mcp-config
//	       --settings '{"permissions":{"ask":["*"]}}'
//
// (Flags: every tool call asks, whatever claude's own or a planted settings
// file would allow.) The prompt and every later message are `user` lines on
// stdin; each permission request is a control_request can_use_tool,
// answered with a control_response {behavior: allow | deny, message} (the
// deny message reaches the model as the tool's result);
// control_cancel_request withdraws one; an `interrupt` control request
// stops the turn. What claude then did with each call comes back in the
// tool_result's tool_result_meta, which the gate records (Gate.Report).
type claudeBridge struct {
	g       *bridge.Gate
	p       *runner.Interactive
	start   time.Time
	stdin   *bridge.Stdin
	parser  runner.Parser
	res     runner.Result
	turns   chan runner.Event
	done    chan struct{}
	files   *bridge.Files
	mu      sync.Mutex
	pending map[string]context.CancelFunc // control request_id → withdraw
	tools   map[string]bridge.Ask         // tool_use id → what it asked
	stopped bool
	seq     int
	// refusal says why the bridge ended the run: a message it did not
	// understand (protocol.go).
	refusal bridge.Refusal
}

func StartBridge(ctx context.Context, req bridge.Request, g *bridge.Gate) (bridge.Started, error) {
	bin, err := bridge.Binary(req, runner.CLIClaude)
	if err != nil {
		return nil, err
	}
	files, err := bridge.NewFiles(req)
	if err != nil {
		return nil, err
	}
	argv, err := commandLine(bin, req, files)
	if err != nil {
		files.Remove()
		return nil, err
	}
	p, err := runner.StartInteractive(argv, req.Dir, req.Env, req.CleanEnv)
	if err != nil {
		files.Remove()
		return nil, err
	}
	if files.Warning != "" {
		g.Event(runner.Event{Kind: "warning", Text: files.Warning})
	}
	b := &claudeBridge{g: g, p: p, start: time.Now(), stdin: bridge.NewStdin(p.Stdin), files: files,
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
	if err := b.Send(ctx, bridge.FirstPrompt(req)); err != nil {
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
	defer b.files.Remove()
	b.parser.Finish(&b.res, nil, nil)
	b.mu.Lock()
	stopped, protoErr := b.stopped, b.refusal.Err()
	b.mu.Unlock()
	if protoErr != "" {
		b.res.Error = protoErr
	}
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
	// ToolResultMeta says, on a `user` line of tool results, who decided
	// each call: {id, permission_decision: {decision: accept | reject,
	// source: user_temporary (the host, us) | user_reject | config | hook}}.
	ToolResultMeta []struct {
		ID       string `json:"id"`
		Decision *struct {
			Decision string `json:"decision"`
			Source   string `json:"source"`
		} `json:"permission_decision"`
	} `json:"tool_result_meta"`
}

type canUseTool struct {
	Subtype   string          `json:"subtype"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// maxLine bounds a line of claude's stream-json: a tool call's whole input
// is one line (an Edit of a 30 MB file: 60 MB).
const maxLine = 256 << 20

func (b *claudeBridge) read() {
	defer close(b.done)
	defer b.withdrawAll()
	sc := bufio.NewScanner(b.p.Stdout)
	sc.Buffer(make([]byte, 64<<10), maxLine)
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
			r, ok := canUseToolOf(c)
			if !ok {
				b.notUnderstood(line)
				continue
			}
			b.ask(c.RequestID, r)
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
	if err := sc.Err(); err != nil {
		// A line not read is a request not answered: the CLI would wait
		// for its answer forever (issue 27: an Edit of a 30 MB file is a
		// 60 MB line). The run ends, saying why.
		b.g.Event(runner.Event{Kind: "warning", Text: fmt.Sprintf("claude's output could not be read (%v; a line is read up to %d MiB): the run is stopped", err, maxLine>>20)})
		go b.p.Stop(b.g.KillGrace())
	}
	io.Copy(io.Discard, b.p.Stdout)
}

// toolBlocks remembers tool calls, and reports what claude did with each
// (its tool_result and who decided, Gate.Report).
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
		IsError   bool            `json:"is_error"`
	}
	if json.Unmarshal(c.Message.Content, &blocks) != nil {
		return
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_use":
			b.mu.Lock()
			// Only what the outcome's record names is kept: not the diff
			// nor the input (an Edit of a 30 MB file would be kept twice
			// until claude reports it), computed before claude checked
			// the call at all.
			b.tools[bl.ID] = b.askOf(bl.Name, bl.Input, bl.ID, false)
			b.mu.Unlock()
		case "tool_result":
			b.mu.Lock()
			a, ok := b.tools[bl.ToolUseID]
			delete(b.tools, bl.ToolUseID)
			b.mu.Unlock()
			if ok {
				b.g.Report(a, outcome(c, bl.ToolUseID, bl.IsError))
			}
		}
	}
}

// outcome is what claude did with the call id, from its tool result and
// tool_result_meta: rejected (by us, or by claude itself) it did not run;
// accepted — by us (source user_temporary) or by its own settings or a
// hook — it ran, failing when the result is an error. A result without a
// decision and with an error is a call claude refused before any
// permission check (an unknown tool, invalid input).
func outcome(c claudeControl, id string, isError bool) bridge.Outcome {
	for _, m := range c.ToolResultMeta {
		if m.ID != id || m.Decision == nil {
			continue
		}
		d := m.Decision
		if d.Decision == "reject" {
			return bridge.Outcome{By: d.Source, Status: "rejected"}
		}
		o := bridge.Outcome{Ran: true, Failed: isError, By: d.Source, Status: "accepted"}
		o.Unasked = d.Source != "" && d.Source != "user_temporary"
		return o
	}
	if isError {
		return bridge.Outcome{Status: "error before any permission check"}
	}
	return bridge.Outcome{Ran: true, Status: "no decision reported"}
}

// internalTools are claude's tools that touch nothing but its own state:
// the deferred-tool search and its task list (ToolSearch, Task*), the list
// of its subagents. agentinfra lets them go at once (a person would only
// be asked to approve claude's bookkeeping). Everything else — reading
// too — goes to the policy; a tool that starts or stops something
// (TaskStop, Agent, CronCreate, Skill, EnterWorktree, Monitor) is no
// bookkeeping.
var internalTools = map[string]bool{"ToolSearch": true, "TaskCreate": true, "TaskGet": true, "TaskList": true, "TaskUpdate": true, "ListAgents": true}

// askOf is the call of tool with input as the gate judges it; with diff,
// as a person sees it too: its input and, for an edit, its diff.
func (b *claudeBridge) askOf(tool string, input json.RawMessage, id string, diff bool) bridge.Ask {
	var in struct {
		Command      string  `json:"command"`
		FilePath     string  `json:"file_path"`
		NotebookPath string  `json:"notebook_path"`
		Path         string  `json:"path"`
		OldString    *string `json:"old_string"`
		NewString    string  `json:"new_string"`
		Content      *string `json:"content"`
		ReplaceAll   bool    `json:"replace_all"`
		URL          string  `json:"url"`
	}
	json.Unmarshal(input, &in)
	a := bridge.Ask{NativeID: id, Tool: tool}
	if diff {
		a.ToolInput = string(input)
	}
	root := b.g.Root()
	switch tool {
	case "Bash", "Monitor": // Monitor runs a command too
		a.Kind, a.Command, a.Title = store.KindCommand, in.Command, "Run "+in.Command
	case "Edit", "Write", "NotebookEdit":
		file := in.FilePath + in.NotebookPath
		a.Kind, a.File, a.Title = store.KindEdit, file, "Edit "+file
		switch {
		case !diff:
		case in.Content != nil:
			a.Diff = bridge.EditDiff(root, file, nil, *in.Content, false)
		case in.OldString != nil:
			a.Diff = bridge.EditDiff(root, file, in.OldString, in.NewString, in.ReplaceAll)
		}
	case "WebFetch":
		a.Kind, a.URL, a.Title = store.KindFetch, in.URL, "Fetch "+in.URL
	default:
		// A tool with a path (Read) is judged as a read of it.
		a.Kind, a.Title = store.KindTool, "Use "+tool
		if f := in.FilePath + in.Path; f != "" {
			a.File, a.Title = f, tool+" "+f
		}
		if internalTools[tool] {
			a.Internal = "claude's " + tool + " touches nothing but claude's own state"
		}
	}
	return a
}

func (b *claudeBridge) ask(requestID string, r canUseTool) {
	ctx, cancel := context.WithCancel(context.Background())
	b.mu.Lock()
	b.pending[requestID] = cancel
	b.mu.Unlock()
	a := b.askOf(r.ToolName, r.Input, r.ToolUseID, true)
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

// commandLine is the command line of a supervised claude: the stream-json control
// protocol, and the flags that make every tool call ask (Settings) with
// none of the settings files an agent could have written loaded
// (--setting-sources ""), nor any MCP server but those agentinfra passes
// (--strict-mcp-config). The system prompt goes in the run's own folder.
func commandLine(bin string, req bridge.Request, files *bridge.Files) ([]string, error) {
	argv := []string{bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--setting-sources", "", "--strict-mcp-config", "--settings", Settings()}
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	if req.Resume != "" {
		argv = append(argv, "--resume", req.Resume)
	}
	if req.SystemPrompt != "" {
		spf, err := files.Write("system-prompt.md", req.SystemPrompt)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--append-system-prompt-file", spf)
	}
	return append(argv, req.ExtraArgs...), nil
}
