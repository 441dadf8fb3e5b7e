package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"slices"
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
// approvalPolicy, sandbox, approvalsReviewer: user}, turn/start. Every tool
// call first passes agentinfra's PreToolUse hook (hook.go: the gate decides
// it there, a person if need be). Server requests
// item/commandExecution/requestApproval, item/fileChange/requestApproval and
// item/permissions/requestApproval are answered {decision: accept|decline}
// (never acceptWithExecpolicyAmendment, which writes a rule; acceptForSession
// only for a command a person approved for the session, sessionDecision),
// and mcpServer/elicitation/
// request for an MCP tool call {action: accept|decline}. A request for a
// call the hook already allowed is accepted at once. The answer has no
// field for a reason: a person's reason goes to the model as turn/steer in
// the same turn, sent just before the decline (never waited for: codex
// answers the steer only after the approval) — a call the hook denies
// carries the reason itself. A turn interrupted while a request waits
// withdraws it.
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
	lastText string
	turnErr  string
	stopped  bool
	// refusal says why the bridge ended the run: a message it did not
	// understand (protocol.go).
	refusal bridge.Refusal
	in, out int64
	tools   int
	// hooked are the calls agentinfra's hook asked about, hookAllowed
	// those it allowed, by item ID.
	hooked      map[string]bridge.Ask
	hookAllowed map[string]bridge.Ask
	// hookSession are the requests a person approved for the session
	// through the hook, by item ID (sessionDecision).
	hookSession map[string]store.Request
	hooks       net.Listener
	files       *bridge.Files
	seq         int

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
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("codex's hook runs agentinfra itself, whose path is unknown: %w", err)
	}
	files, err := bridge.NewFiles(req)
	if err != nil {
		return nil, err
	}
	ln, err := hookListener(files)
	if err != nil {
		files.Remove()
		return nil, err
	}
	argv := commandLine(bin, exe, req.Dir, req.Model, req.SystemPrompt, req.ExtraArgs)
	env := append(slices.Clip(req.Env), EnvHookSocket+"="+ln.Addr().String())
	p, err := runner.StartInteractive(argv, req.Dir, env, req.CleanEnv)
	if err != nil {
		ln.Close()
		files.Remove()
		return nil, err
	}
	if files.Warning != "" {
		g.Event(runner.Event{Kind: "warning", Text: files.Warning})
	}
	b := &codexBridge{g: g, p: p, start: time.Now(), stdin: bridge.NewStdin(p.Stdin), calls: map[int]chan codexMsg{},
		pending: map[string]context.CancelFunc{}, changes: map[string]json.RawMessage{},
		hooked: map[string]bridge.Ask{}, hookAllowed: map[string]bridge.Ask{}, hookSession: map[string]store.Request{}, hooks: ln, files: files,
		turns: make(chan runner.Event, 16), done: make(chan struct{}),
		res: runner.Result{CLI: runner.CLICodex, Model: req.Model}}
	go b.serveHooks(ln)
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
	if err := b.checkHook(ctx, req.Dir); err != nil {
		return fail(err)
	}
	off, err := b.userMCPServers(ctx, req.Dir)
	if err != nil {
		return fail(err)
	}
	thread, prompt, err := b.openThread(ctx, req, off)
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
	b.hooks.Close()
	defer b.files.Remove()
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
	Type           string `json:"type"`
	ID             string `json:"id"`
	Text           string `json:"text"`
	Command        string `json:"command"`
	CommandActions []struct {
		Command string `json:"command"`
	} `json:"commandActions"`
	Status    string          `json:"status"`
	Changes   json.RawMessage `json:"changes"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
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
		case "commandExecution", "mcpToolCall":
			b.mu.Lock()
			b.tools++
			b.mu.Unlock()
			a := b.askOf(p.Item)
			b.g.Event(runner.Event{Kind: "tool_use", Tool: a.Tool, Text: a.Command + a.ToolInput})
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
		case "commandExecution", "fileChange", "mcpToolCall":
			b.g.Event(runner.Event{Kind: "tool_result", Text: p.Item.Status})
			b.g.Report(b.askOf(p.Item), itemOutcome(p.Item.Status))
		}
	case "hook/completed":
		b.hookCompleted(m.Params)
	case "item/commandExecution/terminalInteraction":
		b.stdinWritten(m.Params)
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

// askOf is the call of an item, as the hook asked about it when it did
// (the model's own words of the command), else from the item.
func (b *codexBridge) askOf(it codexItem) bridge.Ask {
	b.mu.Lock()
	a, ok := b.hooked[it.ID]
	b.mu.Unlock()
	if ok {
		return a
	}
	switch it.Type {
	case "fileChange":
		return fileAsk(it.ID, it.Changes)
	case "mcpToolCall":
		return hookAsk(b.g.Root(), hookQuery{ToolName: "mcp__" + it.Server + "__" + it.Tool, ToolInput: it.Arguments, ToolUseID: it.ID})
	}
	cmd := it.Command
	if len(it.CommandActions) == 1 && it.CommandActions[0].Command != "" {
		cmd = it.CommandActions[0].Command
	}
	return bridge.Ask{NativeID: it.ID, Kind: store.KindCommand, Tool: "shell", Command: cmd, Title: "Run " + cmd}
}

// itemOutcome is what codex did with an item, by its final status.
func itemOutcome(status string) bridge.Outcome {
	switch status {
	case "completed":
		return bridge.Outcome{Ran: true, Status: status}
	case "failed":
		return bridge.Outcome{Ran: true, Failed: true, Status: status}
	}
	return bridge.Outcome{Status: status} // declined
}

// hookCompleted records a call a PreToolUse hook blocked: codex reports
// nothing else of it (no item).
func (b *codexBridge) hookCompleted(params json.RawMessage) {
	var p struct {
		Run struct {
			ID        string `json:"id"`
			EventName string `json:"eventName"`
			Status    string `json:"status"`
		} `json:"run"`
	}
	json.Unmarshal(params, &p)
	if p.Run.EventName != "preToolUse" || p.Run.Status != "blocked" {
		return
	}
	// The run's ID ends with the call's: pre-tool-use:0:<source>:<call id>.
	id := p.Run.ID[strings.LastIndex(p.Run.ID, ":")+1:]
	b.mu.Lock()
	a, ok := b.hooked[id]
	b.mu.Unlock()
	if !ok {
		a = bridge.Ask{NativeID: id, Tool: "unknown"}
	}
	b.g.Report(a, bridge.Outcome{Status: "blocked by a PreToolUse hook"})
}

// stdinWritten records what the model typed into a command that is still
// running (write_stdin): codex asks nobody and runs no hook for it, so it
// is a call that ran unasked, whatever the command it went to was allowed
// for.
func (b *codexBridge) stdinWritten(params json.RawMessage) {
	var p struct {
		ItemID string `json:"itemId"`
		Stdin  string `json:"stdin"`
	}
	json.Unmarshal(params, &p)
	b.mu.Lock()
	b.seq++
	n := b.seq
	b.mu.Unlock()
	b.g.Report(bridge.Ask{NativeID: fmt.Sprintf("%s#stdin-%d", p.ItemID, n), Kind: store.KindCommand, Tool: "write_stdin", Command: p.Stdin,
		Title: "Type into " + p.ItemID}, bridge.Outcome{Ran: true, Status: "written to a running command"})
}

func (b *codexBridge) serverRequest(m codexMsg, raw []byte) {
	var p struct {
		ItemID         string `json:"itemId"`
		Command        string `json:"command"`
		Reason         string `json:"reason"`
		CommandActions []struct {
			Command string `json:"command"`
		} `json:"commandActions"`
		ServerName string `json:"serverName"`
		Meta       struct {
			Kind       string          `json:"codex_approval_kind"`
			ToolName   string          `json:"tool_name"`
			ToolParams json.RawMessage `json:"tool_params"`
		} `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	var a bridge.Ask
	answer := func(allow bool) any {
		if allow {
			return map[string]any{"decision": "accept"}
		}
		return map[string]any{"decision": "decline"}
	}
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
		a = fileAsk(p.ItemID, raw)
	case "item/permissions/requestApproval":
		a = bridge.Ask{NativeID: p.ItemID, Kind: store.KindPermissions, Tool: "permissions", ToolInput: string(m.Params), Title: "Grant permissions: " + p.Reason}
	case "mcpServer/elicitation/request":
		answer = func(allow bool) any {
			if allow {
				return map[string]any{"action": "accept", "content": map[string]any{}}
			}
			return map[string]any{"action": "decline", "content": map[string]any{}}
		}
		if p.Meta.Kind != "mcp_tool_call" {
			// A form an MCP server wants filled in: nobody here can.
			b.write(map[string]any{"id": m.ID, "result": answer(false)})
			return
		}
		a = hookAsk(b.g.Root(), hookQuery{ToolName: "mcp__" + p.ServerName + "__" + p.Meta.ToolName, ToolInput: p.Meta.ToolParams})
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
	if b.hookAllowedCall(&a) {
		// The hook asked about this very call and agentinfra allowed it:
		// decided once, answered at once.
		b.mu.Lock()
		r, forSession := b.hookSession[a.NativeID]
		delete(b.hookSession, a.NativeID)
		b.mu.Unlock()
		if d := b.sessionDecision(m.Method, a, r, forSession); d != nil {
			b.write(map[string]any{"id": m.ID, "result": d})
			return
		}
		b.write(map[string]any{"id": m.ID, "result": answer(true)})
		return
	}
	b.mu.Lock()
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
		if !ans.Allow && ans.Message != "" && thread != "" && turn != "" {
			// The reason, as a message in the same turn; its response comes
			// only after the approval's, so it is not waited for.
			b.send("turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn, "input": textInput(ans.Message)})
		}
		if d := b.sessionDecision(m.Method, a, ans.Request, ans.ForSession()); d != nil {
			b.write(map[string]any{"id": m.ID, "result": d})
			return
		}
		b.write(map[string]any{"id": m.ID, "result": answer(ans.Allow)})
	}()
}

// mechanismForSession is codex's own approval for the session, as the
// audit log names it.
const mechanismForSession = "codex acceptForSession"

// sessionDecision is the answer to codex's request about call a when a
// person approved request r for the rest of the session (forSession):
// acceptForSession for a command — codex keeps it for that exact command
// (verified with codex 0.169.0: the same command runs again without a
// request, another one asks), the scope the person approved — recorded in
// the audit log; nil otherwise (a
// file change: codex's approval would cover every later change of those
// files, not verified to match agentinfra's rule, so agentinfra's own scope
// answers). agentinfra's PreToolUse hook still sees every call, so its own
// scope stays in force whatever codex keeps.
func (b *codexBridge) sessionDecision(method string, a bridge.Ask, r store.Request, forSession bool) any {
	if !forSession || method != "item/commandExecution/requestApproval" {
		return nil
	}
	b.g.SessionToCLI(a, r, mechanismForSession)
	return map[string]any{"decision": "acceptForSession"}
}

// hookAllowedCall reports whether agentinfra's hook allowed the very call
// a is about (its item, or for an MCP tool call — which codex asks about
// with no item — the same tool and arguments), taking that call's ID.
func (b *codexBridge) hookAllowedCall(a *bridge.Ask) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.hookAllowed[a.NativeID]; ok && a.NativeID != "" {
		return sameCall(b.g.Root(), h, *a)
	}
	if a.NativeID != "" || a.Kind != store.KindTool {
		return false
	}
	for id, h := range b.hookAllowed {
		if h.Tool == a.Tool && sameJSON(h.ToolInput, a.ToolInput) {
			a.NativeID = id
			delete(b.hookAllowed, id) // one request per call
			return true
		}
	}
	return false
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(x, y string) bool {
	var a, b any
	return json.Unmarshal([]byte(x), &a) == nil && json.Unmarshal([]byte(y), &b) == nil && reflect.DeepEqual(a, b)
}

func (b *codexBridge) withdrawAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.pending {
		cancel()
	}
}

func (b *codexBridge) Process() *runner.Interactive { return b.p }
