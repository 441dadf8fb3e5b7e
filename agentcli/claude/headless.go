package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
)

// Runner runs Claude Code (@anthropic-ai/claude-code):
//
//	claude -p --output-format stream-json --verbose [--model MODEL] [--resume ID]
//	       [--append-system-prompt-file FILE] [--permission-mode M] -- PROMPT
//
// The system prompt (the agent's role) is appended to claude's own: Exec
// writes it to a private temporary file for --append-system-prompt-file, so
// that a long role fits and the recorded argv stays short; a Request without
// the file gets --append-system-prompt TEXT. claude records the system prompt
// of a conversation's first request and sends that one again on --resume
// (its --system-prompt-snapshot), so a changed role needs a new session.
//
// stream-json (which claude only allows with --verbose) gives live progress
// (system init, assistant messages with tool_use blocks, user tool results)
// and ends with the same {type:"result"} record -o json prints. Note that API
// and auth failures come as subtype "success" with is_error true: is_error
// decides. "--" keeps a prompt that starts with "-" from being read as a flag.
type Runner struct{}

func (Runner) Name() string { return runner.CLIClaude }

func (Runner) ReadsSystemPromptFile() bool { return true }

// claudePermission maps the approval modes to claude's --permission-mode.
var claudePermission = map[string]string{
	runner.ApprovalAutoEdit: "acceptEdits",
	runner.ApprovalYolo:     "bypassPermissions",
}

func (Runner) Command(req runner.Request) (runner.Command, error) {
	if err := runner.CheckApproval(req.ApprovalMode); err != nil {
		return runner.Command{}, err
	}
	if err := runner.CheckArgs(req.Model, req.Session); err != nil {
		return runner.Command{}, err
	}
	c := runner.Command{Argv: []string{runner.CLIClaude, "-p", "--output-format", "stream-json", "--verbose"}, PromptArg: -1}
	if req.Model != "" {
		c.Argv = append(c.Argv, "--model", req.Model)
	}
	if req.Session != "" {
		c.Argv = append(c.Argv, "--resume", req.Session)
	}
	switch {
	case req.SystemPromptFile != "":
		c.Argv = append(c.Argv, "--append-system-prompt-file", req.SystemPromptFile)
	case len(req.SystemPrompt) > runner.ArgPromptLimit:
		return runner.Command{}, fmt.Errorf("the system prompt is %d bytes, too long for claude's command line (%d): pass it as SystemPromptFile (Exec does)", len(req.SystemPrompt), runner.ArgPromptLimit)
	case req.SystemPrompt != "":
		c.Argv = append(c.Argv, "--append-system-prompt", req.SystemPrompt)
	}
	if pm := claudePermission[req.ApprovalMode]; pm != "" {
		c.Argv = append(c.Argv, "--permission-mode", pm)
	}
	c.Argv = append(c.Argv, req.ExtraArgs...)
	if len(req.Prompt) > runner.ArgPromptLimit {
		c.Stdin = req.Prompt // claude -p reads the prompt from stdin when none is given
	} else {
		c.Argv = append(c.Argv, "--", req.Prompt)
		c.PromptArg = len(c.Argv) - 1
	}
	return c, nil
}

func (Runner) NewParser(req runner.Request) runner.Parser { return &claudeParser{} }

type claudeParser struct {
	sessionID string
	model     string
	toolCalls int
	lastText  string
	result    *claudeResult
	tokens    int64 // the results' usage so far
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

type claudeResult struct {
	Type           string       `json:"type"`
	Subtype        string       `json:"subtype"`
	IsError        bool         `json:"is_error"`
	Result         *string      `json:"result"`
	SessionID      string       `json:"session_id"`
	Usage          *claudeUsage `json:"usage"`
	NumTurns       int          `json:"num_turns"`
	APIErrorStatus any          `json:"api_error_status"`
	Errors         []string     `json:"errors"`
}

type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Message   *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

func (p *claudeParser) Line(line []byte) []runner.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var l claudeLine
	if json.Unmarshal(line, &l) != nil || l.Type == "" {
		return nil
	}
	if l.SessionID != "" {
		p.sessionID = l.SessionID
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			p.model = l.Model
			return []runner.Event{{Kind: "init", SessionID: l.SessionID, Text: l.Model}}
		}
	case "assistant", "user":
		if l.Message == nil {
			return nil
		}
		var blocks []claudeBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return nil
		}
		var evs []runner.Event
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if l.Type == "assistant" {
					p.lastText = b.Text
					evs = append(evs, runner.Event{Kind: "message", Text: b.Text})
				}
			case "tool_use":
				p.toolCalls++
				evs = append(evs, runner.Event{Kind: "tool_use", Tool: b.Name, Text: string(b.Input)})
			case "tool_result":
				st := "success"
				if b.IsError {
					st = "error"
				}
				evs = append(evs, runner.Event{Kind: "tool_result", Text: st})
			}
		}
		return evs
	case "result":
		var r claudeResult
		if json.Unmarshal(line, &r) == nil {
			p.result = &r
			st := r.Subtype
			if r.IsError {
				st += " (is_error)"
			}
			if r.Usage != nil { // each result counts its own turn
				p.tokens += r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens + r.Usage.OutputTokens
			}
			return []runner.Event{{Kind: "result", Text: st, SessionID: r.SessionID, Tokens: p.tokens}}
		}
	}
	return nil
}

func (p *claudeParser) Finish(res *runner.Result, stdout, stderr []byte) {
	if p.result == nil {
		// -o json prints the result object alone, possibly pretty-printed.
		var r claudeResult
		if json.Unmarshal(bytes.TrimSpace(stdout), &r) == nil && r.Type == "result" {
			p.result = &r
			if r.SessionID != "" {
				p.sessionID = r.SessionID
			}
		}
	}
	res.SessionID = p.sessionID
	if p.model != "" && res.Model == "" {
		res.Model = p.model
	}
	res.ToolCalls = p.toolCalls
	r := p.result
	if r == nil {
		res.Response = p.lastText
		if res.ExitCode != 0 {
			res.Error = fmt.Sprintf("claude exited with code %d without a result record (%s)", res.ExitCode, runner.OutputShape(stdout))
		} else {
			res.Error = "claude printed no result record: " + runner.OutputShape(stdout)
		}
		return
	}
	if r.Result != nil {
		res.Response = *r.Result
	}
	if len(res.Response) > runner.MaxResponse {
		res.Response = res.Response[:runner.MaxResponse]
	}
	if r.Usage != nil {
		res.InputTokens = r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens
		res.OutputTokens = r.Usage.OutputTokens
	}
	switch {
	case r.IsError || (r.Subtype != "" && r.Subtype != "success"):
		msg := strings.TrimSpace(res.Response)
		if msg == "" {
			msg = strings.Join(r.Errors, "; ")
		}
		if msg == "" {
			msg = "no message"
		}
		status := ""
		if r.APIErrorStatus != nil {
			status = fmt.Sprintf(" (API status %v)", r.APIErrorStatus)
		}
		res.Error = fmt.Sprintf("claude reported an error, subtype %s%s: %s", r.Subtype, status, mdtext.Shorten(msg, 1000))
	case res.ExitCode != 0:
		res.Error = fmt.Sprintf("claude exited with code %d", res.ExitCode)
	}
}
