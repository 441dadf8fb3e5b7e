package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
)

// Runner runs the codex CLI (@openai/codex):
//
//	codex exec --json --skip-git-repo-check [-m MODEL] [-c developer_instructions=...]
//	      [sandbox flags] [resume ID] -- PROMPT
//
// The system prompt (the agent's role) goes in developer_instructions: codex
// sends it as a developer message right after its own base instructions,
// which it keeps (codex has no file form for it, so a role longer than the
// argv limit is refused). Its JSONL events: thread.started (thread_id = the session), turn.started,
// item.started/updated/completed (agent_message, reasoning, command_execution,
// file_change, mcp_tool_call, web_search, todo_list, error), turn.completed
// (usage), turn.failed and error. --skip-git-repo-check lets it run in a
// workspace that is not a git repository.
type Runner struct{}

func (Runner) Name() string { return runner.CLICodex }

func (Runner) Command(req runner.Request) (runner.Command, error) {
	if err := runner.CheckApproval(req.ApprovalMode); err != nil {
		return runner.Command{}, err
	}
	if err := runner.CheckArgs(req.Model, req.Session); err != nil {
		return runner.Command{}, err
	}
	c := runner.Command{Argv: []string{runner.CLICodex, "exec", "--json", "--skip-git-repo-check"}, PromptArg: -1}
	if req.Model != "" {
		c.Argv = append(c.Argv, "-m", req.Model)
	}
	if len(req.SystemPrompt) > runner.ArgPromptLimit {
		return runner.Command{}, fmt.Errorf("the system prompt is %d bytes, too long for codex's command line (%d): shorten the role", len(req.SystemPrompt), runner.ArgPromptLimit)
	}
	if req.SystemPrompt != "" {
		c.Argv = append(c.Argv, "-c", "developer_instructions="+tomlString(req.SystemPrompt))
	}
	switch req.ApprovalMode {
	case runner.ApprovalAutoEdit:
		c.Argv = append(c.Argv, "--sandbox", "workspace-write")
	case runner.ApprovalYolo:
		c.Argv = append(c.Argv, "--dangerously-bypass-approvals-and-sandbox")
	}
	c.Argv = append(c.Argv, req.ExtraArgs...)
	if req.Session != "" {
		c.Argv = append(c.Argv, "resume", req.Session)
	}
	if len(req.Prompt) > runner.ArgPromptLimit {
		c.Argv = append(c.Argv, "-") // read the prompt from stdin
		c.Stdin = req.Prompt
	} else {
		c.Argv = append(c.Argv, "--", req.Prompt)
		c.PromptArg = len(c.Argv) - 1
	}
	return c, nil
}

// tomlString quotes s as a TOML basic string (codex parses -c values as TOML).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (Runner) NewParser(req runner.Request) runner.Parser { return &codexParser{} }

type codexParser struct {
	threadID  string
	response  string
	in, out   int64
	toolCalls int
	failed    []string
	completed bool
	sawEvent  bool
}

type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Text     string `json:"text"`
		Message  string `json:"message"`
		Command  string `json:"command"`
		Status   string `json:"status"`
		ExitCode *int   `json:"exit_code"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		Query    string `json:"query"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

func (p *codexParser) Line(line []byte) []runner.Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var ev codexEvent
	if json.Unmarshal(line, &ev) != nil || ev.Type == "" {
		return nil
	}
	p.sawEvent = true
	switch ev.Type {
	case "thread.started":
		p.threadID = ev.ThreadID
		return []runner.Event{{Kind: "init", SessionID: ev.ThreadID}}
	case "turn.completed":
		p.completed = true
		if ev.Usage != nil {
			p.in += ev.Usage.InputTokens
			p.out += ev.Usage.OutputTokens
		}
		return []runner.Event{{Kind: "result", Text: "turn completed"}}
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		p.addFailure(msg)
		return []runner.Event{{Kind: "error", Text: msg}}
	case "error":
		p.addFailure(ev.Message)
		return []runner.Event{{Kind: "error", Text: ev.Message}}
	case "item.started", "item.completed":
		it := ev.Item
		if it == nil {
			return nil
		}
		done := ev.Type == "item.completed"
		switch it.Type {
		case "agent_message":
			if done {
				p.response = it.Text
				if len(p.response) > runner.MaxResponse {
					p.response = p.response[:runner.MaxResponse]
				}
				return []runner.Event{{Kind: "message", Text: it.Text}}
			}
		case "command_execution":
			if !done {
				return []runner.Event{{Kind: "tool_use", Tool: "shell", Text: it.Command}}
			}
			p.toolCalls++
			text := it.Status
			if it.ExitCode != nil {
				text = fmt.Sprintf("%s (exit %d)", it.Status, *it.ExitCode)
			}
			return []runner.Event{{Kind: "tool_result", Tool: "shell", Text: text}}
		case "file_change", "mcp_tool_call", "web_search":
			tool := it.Type
			if it.Tool != "" {
				tool = it.Server + "." + it.Tool
			}
			if !done {
				return []runner.Event{{Kind: "tool_use", Tool: tool, Text: it.Query}}
			}
			p.toolCalls++
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Kind+" "+c.Path)
			}
			return []runner.Event{{Kind: "tool_result", Tool: tool, Text: strings.TrimSpace(it.Status + " " + strings.Join(paths, ", "))}}
		case "error":
			// Non-fatal notices (e.g. unknown model metadata) arrive as error items.
			if done {
				return []runner.Event{{Kind: "warning", Text: it.Message}}
			}
		}
	}
	return nil
}

func (p *codexParser) addFailure(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return
	}
	for _, f := range p.failed {
		if f == msg {
			return
		}
	}
	p.failed = append(p.failed, msg)
}

func (p *codexParser) Finish(res *runner.Result, stdout, stderr []byte) {
	res.SessionID = p.threadID
	res.Response = p.response
	res.InputTokens, res.OutputTokens, res.ToolCalls = p.in, p.out, p.toolCalls
	switch {
	case len(p.failed) > 0:
		res.Error = "codex: " + mdtext.Shorten(strings.Join(p.failed, "; "), 1000)
	case res.ExitCode != 0:
		res.Error = fmt.Sprintf("codex exited with code %d", res.ExitCode)
	case !p.sawEvent:
		res.Error = "codex printed no JSON events: " + runner.OutputShape(stdout)
	case !p.completed:
		res.Error = "codex ended without completing its turn"
	}
}
