package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
)

// Runner runs the gemini CLI (@google/gemini-cli):
//
//	gemini --prompt=PROMPT -m MODEL -o stream-json --skip-trust --approval-mode MODE [--resume SESSION]
//
// It uses -o stream-json rather than -o json: the JSONL stream (init, message,
// tool_use, tool_result, error, result) gives live progress, and together its
// events carry everything the single json object does (session_id in init, the
// response as the assistant message deltas, token and tool stats in result).
// The parser still accepts a -o json object, and the JSON error object gemini
// prints on stderr for fatal errors. --prompt=TEXT (one argv element) keeps a
// prompt that starts with "-" from being read as a flag.
//
// The system prompt (the agent's role) goes through GEMINI_SYSTEM_MD, the one
// way gemini 0.61 takes system instructions from outside its home: the file
// REPLACES gemini's own core system prompt (its mandates, workflows and tool
// guidance; the tool declarations themselves are still sent). gemini's
// context files (GEMINI.md, also from --include-directories) would keep it,
// but since 0.61 they land in the first user message, not in the system
// instruction, and only ~/.gemini/GEMINI.md reaches the system instruction —
// a shared file of the user's that a run must not write. A role may use
// gemini's substitutions (${AvailableTools}, ${AgentSkills}, ${SubAgents}) to
// bring back parts of what it replaces.
type Runner struct{}

func (Runner) Name() string { return runner.CLIGemini }

func (Runner) ReadsSystemPromptFile() bool { return true }

func (Runner) Command(req runner.Request) (runner.Command, error) {
	if err := runner.CheckApproval(req.ApprovalMode); err != nil {
		return runner.Command{}, err
	}
	if err := runner.CheckArgs(req.Model, req.Session); err != nil {
		return runner.Command{}, err
	}
	if req.Model == "" {
		return runner.Command{}, errors.New("gemini needs an explicit model (-m)")
	}
	if err := CheckPromptSize(req.Prompt); err != nil {
		return runner.Command{}, err
	}
	c := runner.Command{Argv: []string{runner.CLIGemini}, PromptArg: -1}
	if len(req.Prompt) > runner.ArgPromptLimit {
		c.Stdin = req.Prompt // gemini reads the prompt from a piped stdin
	} else {
		c.PromptArg = 1
		c.Argv = append(c.Argv, "--prompt="+req.Prompt)
	}
	mode := req.ApprovalMode
	if mode == "" || mode == runner.ApprovalAsk {
		mode = runner.ApprovalDefault
	}
	c.Argv = append(c.Argv, "-m", req.Model, "-o", "stream-json", "--skip-trust", "--approval-mode", mode)
	if req.Session != "" {
		c.Argv = append(c.Argv, "--resume", req.Session)
	}
	c.Argv = append(c.Argv, req.ExtraArgs...)
	switch {
	case req.SystemPromptFile != "":
		c.Env = append(c.Env, "GEMINI_SYSTEM_MD="+req.SystemPromptFile)
	case req.SystemPrompt != "":
		return runner.Command{}, errors.New("gemini reads the system prompt from a file: set SystemPromptFile (Exec does)")
	}
	return c, nil
}

func (Runner) NewParser(req runner.Request) runner.Parser { return &geminiParser{} }

type geminiParser struct {
	sawStream bool
	sawResult bool
	status    string
	errMsg    string
	response  strings.Builder
	pending   strings.Builder // assistant text not yet reported as an event
	preTool   string
	sessionID string
	model     string
	in, out   int64
	toolCalls int
}

type geminiStreamEvent struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Model     string          `json:"model"`
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	Delta     bool            `json:"delta"`
	ToolName  string          `json:"tool_name"`
	ToolID    string          `json:"tool_id"`
	Params    json.RawMessage `json:"parameters"`
	Status    string          `json:"status"`
	Output    string          `json:"output"`
	Severity  string          `json:"severity"`
	Message   string          `json:"message"`
	Error     *geminiError    `json:"error"`
	Stats     *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		ToolCalls    *int  `json:"tool_calls"`
	} `json:"stats"`
}

type geminiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Code    any    `json:"code"`
}

func (p *geminiParser) Line(line []byte) []runner.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var ev geminiStreamEvent
	if json.Unmarshal(line, &ev) != nil || ev.Type == "" {
		return nil
	}
	p.sawStream = true
	if ev.Type == "message" && ev.Role == "assistant" {
		if p.response.Len() < runner.MaxResponse {
			p.response.WriteString(ev.Content)
		}
		// A long message is reported in events of up to MaxEventText
		// (an event's text is cut beyond it), none of it dropped.
		var evs []runner.Event
		if p.pending.Len()+len(ev.Content) > runner.MaxEventText {
			evs = p.Flush()
		}
		p.pending.WriteString(ev.Content)
		return evs
	}
	// Assistant text streams as many small deltas: it is reported as one
	// message event when the next other event arrives, or when the stream
	// has been quiet a moment or ends (Flush, from the runner).
	return append(p.Flush(), p.event(ev)...)
}

// Flush reports the assistant text held so far as one message event
// (runner.Flusher).
func (p *geminiParser) Flush() []runner.Event {
	if p.pending.Len() == 0 {
		return nil
	}
	ev := runner.Event{Kind: "message", Text: p.pending.String()}
	p.pending.Reset()
	return []runner.Event{ev}
}

func (p *geminiParser) event(ev geminiStreamEvent) []runner.Event {
	switch ev.Type {
	case "init":
		p.sessionID, p.model = ev.SessionID, ev.Model
		return []runner.Event{{Kind: "init", SessionID: ev.SessionID, Text: ev.Model}}
	case "tool_use":
		p.toolCalls++
		// Like gemini's json output: the response is the text after the last tool call.
		if s := p.response.String(); s != "" {
			p.preTool = s
		}
		p.response.Reset()
		return []runner.Event{{Kind: "tool_use", Tool: ev.ToolName, Text: string(ev.Params)}}
	case "tool_result":
		text := ev.Output
		if ev.Error != nil {
			text = ev.Error.Message
		}
		return []runner.Event{{Kind: "tool_result", Tool: ev.ToolID, Text: ev.Status + " " + text}}
	case "error":
		kind := "warning"
		if ev.Severity == "error" {
			kind = "error"
		}
		return []runner.Event{{Kind: kind, Text: ev.Message}}
	case "result":
		p.sawResult = true
		p.status = ev.Status
		if ev.Error != nil {
			p.errMsg = ev.Error.Message
		}
		if ev.Stats != nil {
			p.in, p.out = ev.Stats.InputTokens, ev.Stats.OutputTokens
			if ev.Stats.ToolCalls != nil {
				// gemini's own count can miss the calls it streamed (it
				// said 0 after 2): never fewer than the tool_use events.
				p.toolCalls = max(p.toolCalls, *ev.Stats.ToolCalls)
			}
		}
		return []runner.Event{{Kind: "result", Text: ev.Status}}
	}
	return nil
}

// geminiJSON is the single object of -o json (stdout), also printed on stderr
// (without response) for fatal errors.
type geminiJSON struct {
	SessionID *string      `json:"session_id"`
	Response  *string      `json:"response"`
	Error     *geminiError `json:"error"`
	Stats     *struct {
		Models map[string]struct {
			Tokens struct {
				Input      int64 `json:"input"`
				Prompt     int64 `json:"prompt"`
				Candidates int64 `json:"candidates"`
			} `json:"tokens"`
		} `json:"models"`
		Tools struct {
			TotalCalls int `json:"totalCalls"`
		} `json:"tools"`
	} `json:"stats"`
}

func (p *geminiParser) Finish(res *runner.Result, stdout, stderr []byte) {
	if !p.sawStream {
		var obj geminiJSON
		if json.Unmarshal(bytes.TrimSpace(stdout), &obj) == nil && (obj.SessionID != nil || obj.Response != nil || obj.Error != nil) {
			p.fromJSON(&obj)
		}
	}
	if p.errMsg == "" {
		// Fatal errors: a JSON object on stderr after the log lines.
		if obj, ok := lastJSONObject(stderr); ok {
			var g geminiJSON
			if json.Unmarshal(obj, &g) == nil && g.Error != nil {
				p.errMsg = g.Error.Message
				if p.sessionID == "" && g.SessionID != nil {
					p.sessionID = *g.SessionID
				}
			}
		}
	}
	res.SessionID = p.sessionID
	if p.model != "" {
		res.Model = p.model
	}
	res.Response = p.response.String()
	if res.Response == "" {
		res.Response = p.preTool
	}
	res.InputTokens, res.OutputTokens, res.ToolCalls = p.in, p.out, p.toolCalls

	switch {
	case p.errMsg != "":
		res.Error = "gemini: " + apiErrorText(p.errMsg)
	case p.status != "" && p.status != "success":
		res.Error = "gemini: result status " + p.status
	case res.ExitCode != 0:
		res.Error = fmt.Sprintf("gemini exited with code %d", res.ExitCode)
	case !p.sawResult && res.Response == "":
		res.Error = "gemini printed no result: " + runner.OutputShape(stdout)
	}
	if res.Error != "" && res.ExitCode > 0 {
		if hint := geminiExitHint(res.ExitCode); hint != "" && !strings.Contains(res.Error, hint) {
			res.Error += " (exit " + fmt.Sprint(res.ExitCode) + ": " + hint + ")"
		}
	}
}

func (p *geminiParser) fromJSON(obj *geminiJSON) {
	p.sawResult = true
	if obj.SessionID != nil {
		p.sessionID = *obj.SessionID
	}
	if obj.Response != nil {
		p.response.WriteString(*obj.Response)
	}
	if obj.Error != nil {
		p.errMsg = obj.Error.Message
	}
	if obj.Stats != nil {
		for name, m := range obj.Stats.Models {
			in := m.Tokens.Input
			if in == 0 {
				in = m.Tokens.Prompt
			}
			p.in += in
			p.out += m.Tokens.Candidates
			if p.model == "" {
				p.model = name
			}
		}
		p.toolCalls = obj.Stats.Tools.TotalCalls
	}
}

// geminiExitHint explains gemini's documented exit codes.
func geminiExitHint(code int) string {
	switch code {
	case 41:
		return "authentication failed: check GEMINI_API_KEY or the selected auth type"
	case 42:
		return "bad input: check the prompt, --resume session and flags"
	case 44:
		return "sandbox error"
	case 52:
		return "configuration error: check settings.json"
	case 53:
		return "turn limit reached"
	case 55:
		return "untrusted folder"
	case 130:
		return "canceled"
	case 145:
		return "HTTP 401 from the API"
	case 147:
		return "HTTP 403 from the API"
	case 173:
		return "HTTP 429 from the API (rate limit or quota)"
	case 244:
		return "HTTP 500 from the API"
	case 247:
		return "HTTP 503 from the API"
	}
	return ""
}

// apiErrorText turns `[API Error: {"error":{"code":401,"message":"m",...}}]`
// (or the bare JSON) into "API error 401: m"; other text is returned squeezed.
func apiErrorText(s string) string {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "[API Error: "), "]")
	if i := strings.IndexByte(t, '{'); i >= 0 {
		var e struct {
			Error struct {
				Code    any    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(t[i:]), &e) == nil && e.Error.Message != "" {
			msg := "API error"
			if e.Error.Code != nil {
				msg += fmt.Sprintf(" %v", e.Error.Code)
			}
			return msg + ": " + mdtext.Shorten(e.Error.Message, 500)
		}
	}
	return mdtext.Shorten(s, 1000)
}

// lastJSONObject finds the last JSON object that starts at the beginning of a
// line in the last 32 KiB of mixed log output (bounded work whatever the input).
func lastJSONObject(b []byte) ([]byte, bool) {
	if len(b) > 32<<10 {
		b = b[len(b)-32<<10:]
	}
	tries := 0
	for start := len(b); tries < 64; tries++ {
		start = bytes.LastIndexByte(b[:start], '{')
		for start > 0 && b[start-1] != '\n' {
			start = bytes.LastIndexByte(b[:start], '{')
		}
		if start < 0 {
			return nil, false
		}
		dec := json.NewDecoder(bytes.NewReader(b[start:]))
		var raw json.RawMessage
		if dec.Decode(&raw) == nil {
			return raw, true
		}
	}
	return nil, false
}
