package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// codexBridge speaks codex app-server's JSON-RPC (newline-delimited, no
// "jsonrpc" field): initialize, initialized, thread/start {cwd,
// approvalPolicy, sandbox}, turn/start. Server requests
// item/commandExecution/requestApproval, item/fileChange/requestApproval and
// item/permissions/requestApproval are answered {decision: accept|decline}.
// The answer has no field for a reason: a person's reason goes to the model
// as turn/steer in the same turn, sent just before the decline (never
// waited for: codex answers the steer only after the approval). A turn
// interrupted while a request waits withdraws it.
type codexBridge struct {
	g     *bridge.Gate
	p     *runner.Interactive
	start time.Time
	stdin *bridge.Stdin

	mu       sync.Mutex
	nextID   int
	calls    map[int]chan codexMsg
	thread   string
	turn     string
	inTurn   bool
	pending  map[string]context.CancelFunc // server request id → withdraw
	changes  map[string]json.RawMessage    // fileChange item id → its changes
	asked    map[string]bool               // item ids that were asked about
	lastText string
	turnErr  string
	stopped  bool
	// refusal says why the bridge ended the run: a message it did not
	// understand (protocol.go).
	refusal bridge.Refusal
	in, out int64
	tools   int

	turns chan runner.Event
	done  chan struct{}
	res   runner.Result
}

type codexMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func StartBridge(ctx context.Context, req bridge.Request, g *bridge.Gate) (bridge.Started, error) {
	bin, err := bridge.Binary(req, runner.CLICodex)
	if err != nil {
		return nil, err
	}
	argv := []string{bin, "app-server"}
	if req.Model != "" {
		argv = append(argv, "-c", "model="+strconv.Quote(req.Model))
	}
	if req.SystemPrompt != "" {
		argv = append(argv, "-c", "developer_instructions="+strconv.Quote(req.SystemPrompt))
	}
	argv = append(argv, req.ExtraArgs...)
	p, err := runner.StartInteractive(argv, req.Dir, req.Env, req.CleanEnv)
	if err != nil {
		return nil, err
	}
	b := &codexBridge{g: g, p: p, start: time.Now(), stdin: bridge.NewStdin(p.Stdin), calls: map[int]chan codexMsg{},
		pending: map[string]context.CancelFunc{}, changes: map[string]json.RawMessage{}, asked: map[string]bool{},
		turns: make(chan runner.Event, 16), done: make(chan struct{}),
		res: runner.Result{CLI: runner.CLICodex, Model: req.Model}}
	go b.read()
	go func() {
		select {
		case <-ctx.Done():
			b.Stop()
		case <-b.done:
		}
	}()
	fail := func(err error) (bridge.Started, error) {
		b.Stop()
		<-b.done
		_, tail, _ := p.Wait()
		return nil, fmt.Errorf("codex app-server: %w%s", err, bridge.StderrExcerpt(tail))
	}
	if _, err := b.call(ctx, "initialize", map[string]any{"clientInfo": map[string]any{"name": "agentinfra", "title": "agentinfra", "version": "0"}, "capabilities": nil}); err != nil {
		return fail(err)
	}
	b.notify("initialized", nil)
	thread, prompt, err := b.openThread(ctx, req)
	if err != nil {
		return fail(err)
	}
	b.mu.Lock()
	b.thread = thread
	b.mu.Unlock()
	b.res.SessionID = thread
	g.Event(runner.Event{Kind: "init", SessionID: thread, Text: req.Model})
	if err := b.Send(ctx, prompt); err != nil {
		return fail(err)
	}
	return b, nil
}

func (b *codexBridge) write(v any) error { return b.stdin.Write(v) }

func (b *codexBridge) notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return b.write(m)
}

// send writes a request and returns the channel its response comes on.
func (b *codexBridge) send(method string, params any) (chan codexMsg, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan codexMsg, 1)
	b.calls[id] = ch
	b.mu.Unlock()
	return ch, b.write(map[string]any{"id": id, "method": method, "params": params})
}

func (b *codexBridge) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, err := b.send(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: codex exited", method)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func textInput(text string) []any {
	return []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}
}

// Send steers the running turn, or starts a new one when idle.
func (b *codexBridge) Send(ctx context.Context, text string) error {
	b.mu.Lock()
	thread, turn, inTurn := b.thread, b.turn, b.inTurn
	if !inTurn {
		b.inTurn = true
	}
	b.mu.Unlock()
	if inTurn && turn != "" {
		_, err := b.send("turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn, "input": textInput(text)})
		return err
	}
	_, err := b.send("turn/start", map[string]any{"threadId": thread, "input": textInput(text)})
	return err
}

func (b *codexBridge) Interrupt(ctx context.Context) error {
	b.mu.Lock()
	thread, turn := b.thread, b.turn
	b.mu.Unlock()
	if turn == "" {
		return nil
	}
	_, err := b.send("turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
	return err
}

func (b *codexBridge) TurnEnded() <-chan runner.Event { return b.turns }

func (b *codexBridge) Close() error { return b.stdin.Close() }

func (b *codexBridge) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.Close()
	b.p.Stop(b.g.KillGrace())
}

func (b *codexBridge) Wait() (runner.Result, error) {
	<-b.done
	b.mu.Lock()
	b.res.Response, b.res.InputTokens, b.res.OutputTokens, b.res.ToolCalls = b.lastText, b.in, b.out, b.tools
	if b.turnErr != "" {
		b.res.Error = b.turnErr
	}
	if protoErr := b.refusal.Err(); protoErr != "" {
		b.res.Error = protoErr
	}
	stopped := b.stopped
	b.mu.Unlock()
	err := bridge.Finish(&b.res, b.start, b.p, stopped)
	return b.res, err
}

func (b *codexBridge) read() {
	defer close(b.done)
	defer b.withdrawAll()
	sc := bufio.NewScanner(b.p.Stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m codexMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			b.serverRequest(m, bytes.Clone(sc.Bytes()))
		case m.Method != "":
			b.notification(m)
		case len(m.ID) > 0:
			id, _ := strconv.Atoi(string(m.ID))
			b.mu.Lock()
			ch := b.calls[id]
			delete(b.calls, id)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
	io.Copy(io.Discard, b.p.Stdout)
}

type codexItem struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Text    string          `json:"text"`
	Command string          `json:"command"`
	Status  string          `json:"status"`
	Changes json.RawMessage `json:"changes"`
}

func (b *codexBridge) notification(m codexMsg) {
	var p struct {
		Item codexItem `json:"item"`
		Turn struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"turn"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		TokenUsage *struct {
			Total struct {
				InputTokens  int64 `json:"inputTokens"`
				OutputTokens int64 `json:"outputTokens"`
			} `json:"total"`
		} `json:"tokenUsage"`
	}
	json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "turn/started":
		b.mu.Lock()
		b.turn, b.inTurn = p.Turn.ID, true
		b.mu.Unlock()
	case "turn/completed":
		b.mu.Lock()
		b.inTurn = false
		if p.Turn.Error != nil {
			b.turnErr = "codex: " + p.Turn.Error.Message
		}
		b.mu.Unlock()
		if p.Turn.Status == "interrupted" {
			b.withdrawAll()
		}
		b.mu.Lock()
		tokens := b.in + b.out // thread/tokenUsage/updated: the thread's total
		b.mu.Unlock()
		ev := runner.Event{Kind: "result", Text: p.Turn.Status, SessionID: b.res.SessionID, Tokens: tokens}
		b.g.Event(ev)
		select {
		case b.turns <- ev:
		default:
		}
	case "item/started":
		switch p.Item.Type {
		case "commandExecution":
			b.mu.Lock()
			b.tools++
			b.mu.Unlock()
			b.g.Event(runner.Event{Kind: "tool_use", Tool: "shell", Text: p.Item.Command})
		case "fileChange":
			b.mu.Lock()
			b.tools++
			b.changes[p.Item.ID] = p.Item.Changes
			b.mu.Unlock()
			b.g.Event(runner.Event{Kind: "tool_use", Tool: "apply_patch", Text: string(p.Item.Changes)})
		}
	case "item/completed":
		switch p.Item.Type {
		case "agentMessage":
			b.mu.Lock()
			b.lastText = p.Item.Text
			b.mu.Unlock()
			b.g.Event(runner.Event{Kind: "message", Text: p.Item.Text})
		case "commandExecution", "fileChange":
			b.g.Event(runner.Event{Kind: "tool_result", Text: p.Item.Status})
			b.mu.Lock()
			asked := b.asked[p.Item.ID]
			b.mu.Unlock()
			if !asked && p.Item.Status == "completed" {
				b.g.RanWithoutAsking("", b.askOf(p.Item))
			}
		}
	case "error":
		if p.Error != nil {
			b.g.Event(runner.Event{Kind: "error", Text: p.Error.Message})
		}
	case "thread/tokenUsage/updated":
		if p.TokenUsage != nil {
			b.mu.Lock()
			b.in, b.out = p.TokenUsage.Total.InputTokens, p.TokenUsage.Total.OutputTokens
			b.mu.Unlock()
		}
	case "serverRequest/resolved": // resolved elsewhere (a hook): no longer ours to answer
		var r struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(m.Params, &r)
		b.mu.Lock()
		if cancel := b.pending[string(r.RequestID)]; cancel != nil {
			cancel()
		}
		b.mu.Unlock()
	}
}

func (b *codexBridge) askOf(it codexItem) bridge.Ask {
	if it.Type == "fileChange" {
		return b.fileAsk(it.ID, it.Changes)
	}
	return bridge.Ask{NativeID: it.ID, Kind: store.KindCommand, Tool: "shell", Command: it.Command, Title: "Run " + it.Command}
}

// fileAsk describes a file change: its files and their unified diffs.
func (b *codexBridge) fileAsk(itemID string, raw json.RawMessage) bridge.Ask {
	var changes []struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	json.Unmarshal(raw, &changes)
	a := bridge.Ask{NativeID: itemID, Kind: store.KindEdit, Tool: "apply_patch", ToolInput: string(raw)}
	var files []string
	var diff strings.Builder
	for _, c := range changes {
		files = append(files, c.Path)
		diff.WriteString(c.Diff)
	}
	if len(files) > 0 {
		a.File = files[0]
	}
	a.Diff = diff.String()
	a.Title = "Edit " + strings.Join(files, ", ")
	return a
}

func (b *codexBridge) serverRequest(m codexMsg, raw []byte) {
	var p struct {
		ItemID         string `json:"itemId"`
		Command        string `json:"command"`
		Reason         string `json:"reason"`
		CommandActions []struct {
			Command string `json:"command"`
		} `json:"commandActions"`
	}
	json.Unmarshal(m.Params, &p)
	var a bridge.Ask
	switch m.Method {
	case "item/commandExecution/requestApproval":
		cmd := p.Command
		if len(p.CommandActions) == 1 && p.CommandActions[0].Command != "" {
			cmd = p.CommandActions[0].Command // the command itself, without codex's `bash -lc` wrapper
		}
		a = bridge.Ask{NativeID: p.ItemID, Kind: store.KindCommand, Tool: "shell", ToolInput: string(m.Params), Command: cmd, Title: "Run " + cmd}
	case "item/fileChange/requestApproval":
		b.mu.Lock()
		raw := b.changes[p.ItemID]
		b.mu.Unlock()
		a = b.fileAsk(p.ItemID, raw)
	case "item/permissions/requestApproval":
		a = bridge.Ask{NativeID: p.ItemID, Kind: store.KindPermissions, Tool: "permissions", ToolInput: string(m.Params), Title: "Grant permissions: " + p.Reason}
	default: // nothing else is answered on a person's behalf: fail closed
		b.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "agentinfra does not answer " + m.Method}})
		if !declined[m.Method] {
			b.notUnderstood(raw)
		}
		return
	}
	if p.ItemID == "" {
		b.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32602, "message": "agentinfra cannot tell which item " + m.Method + " is about"}})
		b.notUnderstood(raw)
		return
	}
	b.mu.Lock()
	b.asked[p.ItemID] = true
	ctx, cancel := context.WithCancel(context.Background())
	b.pending[string(m.ID)] = cancel
	thread, turn := b.thread, b.turn
	b.mu.Unlock()
	go func() {
		defer func() {
			b.mu.Lock()
			delete(b.pending, string(m.ID))
			b.mu.Unlock()
			cancel()
		}()
		ans := b.g.Decide(ctx, a)
		if ctx.Err() != nil {
			return // withdrawn (the turn was interrupted): codex expects no answer
		}
		decision := "decline"
		if ans.Allow {
			decision = "accept"
		} else if ans.Message != "" && thread != "" && turn != "" {
			// The reason, as a message in the same turn; its response comes
			// only after the approval's, so it is not waited for.
			b.send("turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn, "input": textInput(ans.Message)})
		}
		b.write(map[string]any{"id": m.ID, "result": map[string]any{"decision": decision}})
	}()
}

func (b *codexBridge) withdrawAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.pending {
		cancel()
	}
}

func (b *codexBridge) Process() *runner.Interactive { return b.p }
