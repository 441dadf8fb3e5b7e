package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// geminiBridge speaks ACP to `gemini --acp` through the ACP Go SDK:
// session/request_permission is answered with the option whose kind is
// allow_once or reject_once (never by a hard-coded id), or cancelled when
// the turn is cancelled. The answer carries no reason, and a prompt sent
// mid-turn would cancel the turn: a person's reason, and anything Send
// gets mid-turn, is queued and sent as the next prompt when the turn ends.
type geminiBridge struct {
	g       *bridge.Gate
	p       *runner.Interactive
	conn    *acp.ClientSideConnection
	start   time.Time
	session acp.SessionId
	cleanup func()

	mu       sync.Mutex
	inTurn   bool
	queue    []string
	text     strings.Builder
	lastText string
	tokens   int64 // the prompts' usage so far
	turnErr  string
	// requested are the calls gemini asked about, tools those it
	// announced running (a tool_call): by ACP tool call ID.
	requested map[string]bridge.Ask
	tools     map[string]bridge.Ask
	pending   map[string]context.CancelFunc
	stopped   bool
	// loading: session/load replays the session's history as updates,
	// which are not this run's events.
	loading bool
	// refusal says why the bridge ended the run: a message it did not
	// understand (protocol.go).
	refusal bridge.Refusal
	// called: the IDs of the tool calls of the run, from whichever of
	// gemini's messages named them first (a call it asked permission for
	// may come with no tool_call update: it reported 0 calls after 2).
	called map[string]bool

	turns chan runner.Event
	res   runner.Result
}

func StartBridge(ctx context.Context, req bridge.Request, g *bridge.Gate) (bridge.Started, error) {
	bin, err := bridge.Binary(req, runner.CLIGemini)
	if err != nil {
		return nil, err
	}
	if req.Model == "" {
		return nil, agenterr.Invalidf("model", "gemini needs an explicit model")
	}
	files, err := bridge.NewFiles(req)
	if err != nil {
		return nil, err
	}
	argv, env, warnings, err := commandLine(bin, req, files, SystemPolicies)
	if err != nil {
		files.Remove()
		return nil, err
	}
	p, err := runner.StartInteractive(argv, req.Dir, env, req.CleanEnv)
	if err != nil {
		files.Remove()
		return nil, err
	}
	for _, w := range warnings {
		g.Event(runner.Event{Kind: "warning", Text: w})
	}
	cleanup := files.Remove
	b := &geminiBridge{g: g, p: p, start: time.Now(), cleanup: cleanup, requested: map[string]bridge.Ask{}, called: map[string]bool{}, tools: map[string]bridge.Ask{},
		pending: map[string]context.CancelFunc{}, turns: make(chan runner.Event, 16),
		res: runner.Result{CLI: runner.CLIGemini, Model: req.Model}}
	b.conn = acp.NewClientSideConnection(&geminiClient{b: b}, p.Stdin, p.Stdout)
	b.conn.SetLogger(slog.New(slog.DiscardHandler))
	go func() {
		select {
		case <-ctx.Done():
			b.Stop()
		case <-p.Done():
		}
	}()
	fail := func(err error) (bridge.Started, error) {
		b.Stop()
		_, tail, _ := p.Wait()
		cleanup()
		return nil, fmt.Errorf("gemini --acp: %w%s", err, bridge.StderrExcerpt(tail))
	}
	init, err := b.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{}}})
	if err != nil {
		return fail(err)
	}
	if err := checkProtocol(init); err != nil {
		return fail(err)
	}
	prompt, err := b.openSession(ctx, req, init.AgentCapabilities.LoadSession)
	if err != nil {
		return fail(err)
	}
	b.res.SessionID = string(b.session)
	g.Event(runner.Event{Kind: "init", SessionID: b.res.SessionID, Text: req.Model})
	b.mu.Lock()
	b.inTurn = true
	b.mu.Unlock()
	go b.turn(prompt)
	return b, nil
}

// turn runs prompts until the queue is empty; only then is the turn over.
func (b *geminiBridge) turn(text string) {
	for {
		resp, err := b.conn.Prompt(context.Background(), acp.PromptRequest{SessionId: b.session, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		b.mu.Lock()
		if t := b.text.String(); t != "" {
			b.lastText = t
		}
		b.text.Reset()
		if err != nil {
			b.turnErr = "gemini: " + err.Error()
		}
		if in, out, ok := promptUsage(resp); ok {
			b.res.InputTokens, b.res.OutputTokens = in, out
			b.tokens += in + out // each prompt's own
		}
		tokens := b.tokens
		next := ""
		if len(b.queue) > 0 && err == nil && !b.stopped {
			next, b.queue = b.queue[0], b.queue[1:]
		} else {
			b.inTurn = false
		}
		b.mu.Unlock()
		ev := runner.Event{Kind: "result", Text: string(resp.StopReason), SessionID: b.res.SessionID, Tokens: tokens}
		if err != nil {
			ev = runner.Event{Kind: "error", Text: err.Error()}
		}
		b.g.Event(ev)
		if next == "" {
			select {
			case b.turns <- ev:
			default:
			}
			return
		}
		text = next
	}
}

func (b *geminiBridge) Send(ctx context.Context, text string) error {
	b.mu.Lock()
	if b.inTurn {
		b.queue = append(b.queue, text) // a prompt now would cancel the turn
		b.mu.Unlock()
		return nil
	}
	b.inTurn = true
	b.mu.Unlock()
	go b.turn(text)
	return nil
}

func (b *geminiBridge) Interrupt(ctx context.Context) error {
	b.mu.Lock()
	for _, cancel := range b.pending {
		cancel()
	}
	b.mu.Unlock()
	return b.conn.Cancel(ctx, acp.CancelNotification{SessionId: b.session})
}

func (b *geminiBridge) TurnEnded() <-chan runner.Event { return b.turns }

func (b *geminiBridge) Close() error { return b.p.Stdin.Close() }

func (b *geminiBridge) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.Close()
	b.p.Stop(b.g.KillGrace())
}

func (b *geminiBridge) Wait() (runner.Result, error) {
	<-b.p.Done()
	defer b.cleanup()
	b.mu.Lock()
	for _, cancel := range b.pending {
		cancel()
	}
	b.res.Response, b.res.ToolCalls = b.lastText, len(b.called)
	if b.turnErr != "" && !b.stopped {
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

// askOf describes a tool call of gemini's.
func (b *geminiBridge) askOf(tc acp.ToolCallUpdate) bridge.Ask {
	title := ""
	if tc.Title != nil {
		title = *tc.Title
	}
	kind := acp.ToolKindOther
	if tc.Kind != nil {
		kind = *tc.Kind
	}
	a := bridge.Ask{NativeID: string(tc.ToolCallId), Tool: toolName(string(tc.ToolCallId)), Title: title}
	switch kind {
	case acp.ToolKindExecute:
		a.Kind, a.Command, a.Title = store.KindCommand, title, "Run "+title
	case acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
		a.Kind = store.KindEdit
		for _, c := range tc.Content {
			if d := c.Diff; d != nil {
				a.File = d.Path
				a.Diff += bridge.EditDiff(b.g.Root(), d.Path, d.OldText, d.NewText, false)
			}
		}
		if a.File == "" && len(tc.Locations) > 0 {
			a.File = tc.Locations[0].Path
		}
	case acp.ToolKindFetch:
		a.Kind, a.URL = store.KindFetch, title
	default:
		a.Kind = store.KindTool
		if len(tc.Locations) > 0 {
			a.File = tc.Locations[0].Path
		}
	}
	return a
}

// toolName is gemini's tool name, the head of its tool call IDs
// (run_shell_command__run_shell_command_1795…).
func toolName(id string) string {
	if n, _, ok := strings.Cut(id, "__"); ok {
		return n
	}
	return id
}

// geminiClient is the ACP client side: permissions and session updates.
// It offers no file system or terminal (gemini uses its own tools).
type geminiClient struct{ b *geminiBridge }

func (c *geminiClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	b := c.b
	if p.ToolCall.ToolCallId == "" || len(p.Options) == 0 {
		b.notUnderstood(p)
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	}
	a := b.askOf(p.ToolCall)
	id := string(p.ToolCall.ToolCallId)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	b.requested[id] = a
	b.called[id] = true
	b.pending[id] = cancel
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}()
	ans := b.g.Decide(wctx, a)
	if wctx.Err() != nil {
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	}
	// Never allow_always (proceed_always, "Allow for this session"), which
	// gemini may keep as a rule of its own: each call is agentinfra's to
	// decide.
	want := acp.PermissionOptionKindRejectOnce
	if ans.Allow {
		want = acp.PermissionOptionKindAllowOnce
	} else {
		// gemini reports nothing more of a call it was told to reject (the
		// model gets "canceled by the user"): the refusal is its outcome.
		b.g.Report(a, bridge.Outcome{Status: "rejected: gemini does not run it"})
	}
	if !ans.Allow && ans.Reason != "" {
		b.mu.Lock()
		b.queue = append(b.queue, ans.Message) // the reason, as the next prompt
		b.mu.Unlock()
	}
	for _, o := range p.Options {
		if o.Kind == want {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	if ans.Allow {
		// Approved, and no option says so: the bridge cannot carry the
		// decision (the request has another shape). The call is not run.
		b.notUnderstood(p)
	}
	// Cancelled, which gemini treats as a rejection.
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *geminiClient) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	b, u := c.b, n.Update
	b.mu.Lock()
	loading := b.loading
	b.mu.Unlock()
	if loading {
		return nil // the history session/load replays
	}
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		t := u.AgentMessageChunk.Content.Text.Text
		b.mu.Lock()
		b.text.WriteString(t)
		b.mu.Unlock()
		b.g.Event(runner.Event{Kind: "message", Text: t})
	case u.ToolCall != nil:
		tc := u.ToolCall
		kind := tc.Kind
		title := tc.Title
		a := b.askOf(acp.ToolCallUpdate{ToolCallId: tc.ToolCallId, Title: &title, Kind: &kind, Content: tc.Content, Locations: tc.Locations})
		b.mu.Lock()
		b.tools[string(tc.ToolCallId)] = a
		b.called[string(tc.ToolCallId)] = true
		b.mu.Unlock()
		b.g.Event(runner.Event{Kind: "tool_use", Tool: a.Tool, Text: tc.Title})
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		st := *u.ToolCallUpdate.Status
		if st != acp.ToolCallStatusCompleted && st != acp.ToolCallStatusFailed {
			return nil
		}
		id := string(u.ToolCallUpdate.ToolCallId)
		b.g.Event(runner.Event{Kind: "tool_result", Tool: toolName(id), Text: string(st)})
		b.mu.Lock()
		b.called[id] = true
		a, known := b.tools[id]
		if !known {
			a, known = b.requested[id]
		}
		b.mu.Unlock()
		if known {
			b.g.Report(a, bridge.Outcome{Ran: true, Failed: st == acp.ToolCallStatusFailed, Status: string(st)})
		}
	}
	return nil
}

func (c *geminiClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, fmt.Errorf("agentinfra offers no file system to the agent")
}
func (c *geminiClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, fmt.Errorf("agentinfra offers no file system to the agent")
}
func (c *geminiClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, fmt.Errorf("agentinfra offers no terminal to the agent")
}
func (c *geminiClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, fmt.Errorf("no terminal")
}
func (c *geminiClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, fmt.Errorf("no terminal")
}
func (c *geminiClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, fmt.Errorf("no terminal")
}
func (c *geminiClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, fmt.Errorf("no terminal")
}

// promptUsage is a prompt's token counts: ACP's usage field, else what
// gemini puts in the response's _meta (quota.token_count), the totals of
// that prompt's model calls.
func promptUsage(resp acp.PromptResponse) (in, out int64, ok bool) {
	if resp.Usage != nil {
		return int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens), true
	}
	raw, err := json.Marshal(resp.Meta["quota"])
	if err != nil {
		return 0, 0, false
	}
	var q struct {
		TokenCount *struct {
			Input  int64 `json:"input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"token_count"`
	}
	if json.Unmarshal(raw, &q) != nil || q.TokenCount == nil {
		return 0, 0, false
	}
	return q.TokenCount.Input, q.TokenCount.Output, true
}

func (b *geminiBridge) Process() *runner.Interactive { return b.p }

// commandLine is the command line and environment of a supervised gemini:
// ACP, the model, agentinfra's ask-everything policy (AskAllTOML) as an
// admin policy (policyFlag), and the system prompt (GEMINI_SYSTEM_MD) —
// both files in the run's own folder. warnings are to be said once.
func commandLine(bin string, req bridge.Request, files *bridge.Files, systemPolicies string) (argv, env, warnings []string, err error) {
	pol, err := files.Write("policy.toml", AskAllTOML)
	if err != nil {
		return nil, nil, nil, err
	}
	flag, warning := policyFlag(systemPolicies)
	argv = []string{bin, "--acp", "-m", req.Model, flag, pol}
	for _, w := range []string{files.Warning, warning} {
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	env = append([]string{}, req.Env...)
	if req.SystemPrompt != "" {
		spf, err := files.Write("system.md", req.SystemPrompt)
		if err != nil {
			return nil, nil, nil, err
		}
		env = append(env, "GEMINI_SYSTEM_MD="+spf)
	}
	return append(argv, req.ExtraArgs...), env, warnings, nil
}
