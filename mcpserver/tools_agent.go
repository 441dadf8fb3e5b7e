package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/agentside"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// ToolsetAgent is the agent-side toolset (opt-in: `serve --toolsets
// ...,agent`): the tools an agent agentinfra did not launch (a person's own
// Claude Code or Gemini) calls to get a remote approver. Each MCP client is
// its own supervised session (package agentside). No tool decides: people
// do, with `agentinfra approve|reject|answer`, the console or Slack.
const ToolsetAgent = "agent"

// agentTools registers the agent toolset on s.
func (s *Server) registerAgentTools() error {
	s.agent = agentside.New(agentside.Options{Workspace: s.ws, Getenv: s.opts.Getenv, ProgressEvery: s.opts.AgentProgressEvery})
	for _, reg := range []func() error{s.addAskApproval, s.addAcceptDiff, s.addCheckAutoApprove, s.addForwardPrompt,
		s.addWaitForInstruction, s.addHeartbeat, s.addRemoteLog, s.addRecoverState, s.addSetOperationalMode} {
		if err := reg(); err != nil {
			return err
		}
	}
	return nil
}

// agentClient is the agentside client of the MCP session of req; a new one
// ends its session when the MCP session closes.
func (s *Server) agentClient(req *mcp.CallToolRequest) *agentside.Client {
	ss := req.Session
	name := ""
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		name = ip.ClientInfo.Name
	}
	c, created := s.agent.Client(ss, name)
	if created {
		go func() {
			ss.Wait()
			s.agent.Forget(ss, "the MCP client disconnected")
		}()
	}
	return c
}

// progressOf sends MCP progress notifications for a blocking call when the
// client asked for them (a progress token): HTTP clients keep a long wait
// open as long as progress comes.
func progressOf(ctx context.Context, req *mcp.CallToolRequest) agentside.Progress {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return func(elapsed time.Duration, msg string) {
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: elapsed.Seconds(),
			Message: fmt.Sprintf("%s (%s so far)", msg, elapsed.Round(time.Second))})
	}
}

// waitArg parses a blocking call's timeout ("" = none given).
func waitArg(field, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fieldErrorf(field, "%q is not a duration; pass one like 90s, 10m or 1h", v)
	}
	return d, nil
}

var agentTimeoutProp = prop{Desc: "Go duration (90s, 10m): wait at most this long; it can shorten the workspace's configured timeout, never lengthen it."}

type askApprovalIn struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	File        string `json:"file"`
	Diff        string `json:"diff"`
	Risk        string `json:"risk"`
	Timeout     string `json:"timeout"`
}

func (s *Server) addAskApproval() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "ask_approval", Title: "Ask a person to approve",
			Description: "Ask a person to approve an edit or an action, and wait. Blocks until someone approves or rejects (`agentinfra approve|reject ID`, the console, Slack) or it times out: status approved, rejected (with the reason) or timeout, and request_id. For an edit give file and a unified diff of it (checked now against the file); once approved, apply it with accept_diff. You never approve yourself."},
		Props: map[string]prop{
			"title":       {Desc: "One line: what is to be approved."},
			"description": {Desc: "Why, and what happens if approved."},
			"file":        {Desc: "The file the diff changes, relative to the workspace."},
			"diff":        {Desc: "Unified diff of that one file (---/+++ and @@ hunks)."},
			"risk":        {Desc: "Your grading; the policy's is used when higher.", Enum: []string{supervision.RiskLow, supervision.RiskHigh, supervision.RiskCritical}},
			"timeout":     agentTimeoutProp,
		},
		Required: []string{"title"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in askApprovalIn, _ map[string]json.RawMessage) (agentside.Verdict, string, error) {
		d, err := waitArg("timeout", in.Timeout)
		if err != nil {
			return agentside.Verdict{}, "", err
		}
		v, err := s.agentClient(req).AskApproval(ctx, agentside.Ask{Title: in.Title, Description: in.Description, File: in.File, Diff: in.Diff, Risk: in.Risk, Timeout: d}, progressOf(ctx, req))
		if err != nil {
			return v, "", err
		}
		text := fmt.Sprintf("request %d: %s", v.RequestID, v.Status)
		if v.DecidedBy != "" && v.Status != agentside.VerdictTimeout {
			text += " by " + supervision.Handle(v.DecidedBy) + " via " + v.Surface
		}
		if v.Reason != "" {
			text += ": " + v.Reason
		}
		if v.Status == agentside.VerdictApproved && v.File != "" {
			text += fmt.Sprintf("; apply it with accept_diff request_id=%d", v.RequestID)
		}
		return v, text, nil
	})
}

type acceptDiffIn struct {
	RequestID int64 `json:"request_id"`
}

func (s *Server) addAcceptDiff() error {
	t := &mcp.Tool{Name: "accept_diff", Title: "Apply an approved diff",
		Description: "Apply the diff of an approved ask_approval request. Status applied; already_consumed (applied before); patch_conflict (the file changed since you asked: nothing is written, ask again). Only inside the workspace."}
	in, err := inputSchema[acceptDiffIn](map[string]prop{"request_id": {Desc: "From ask_approval."}}, []string{"request_id"})
	if err != nil {
		return err
	}
	t.InputSchema = in
	names := []string{"request_id"}
	// Not addTool: already_consumed and patch_conflict are results with
	// isError set and their status in structuredContent.
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a acceptDiffIn
		if _, err := decodeArgs(req.Params.Arguments, &a, names, names); err != nil {
			return errorResult(err, names), nil
		}
		out, err := s.agentClient(req).AcceptDiff(ctx, a.RequestID)
		if err != nil {
			return errorResult(err, names), nil
		}
		b, _ := json.Marshal(out)
		text := fmt.Sprintf("request %d: %s %s", out.RequestID, out.Status, out.File)
		if out.Reason != "" {
			text += ": " + out.Reason
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(b),
			IsError: out.Status != agentside.AcceptApplied}, nil
	})
	return nil
}

type checkAutoApproveIn struct {
	Kind    string `json:"kind"`
	Command string `json:"command"`
	File    string `json:"file"`
	URL     string `json:"url"`
	Tool    string `json:"tool"`
}

func (s *Server) addCheckAutoApprove() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "check_auto_approve", Title: "Does the policy allow it",
			Description: "Whether the workspace policy lets an action run without a person (read-only). Answers auto, the risk and the rule (.agent/policy.yaml, bounded by the user's allowlist); when auto is false, ask_approval.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		Props: map[string]prop{
			"kind":    {Enum: agentside.ActionKinds, Desc: "What the action is."},
			"command": {Desc: "kind command: the command line."},
			"file":    {Desc: "kind edit or read: the file."},
			"url":     {Desc: "kind fetch: the URL."},
			"tool":    {Desc: "kind tool: the tool's name."},
		},
		Required: []string{"kind"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in checkAutoApproveIn, _ map[string]json.RawMessage) (agentside.AutoApprove, string, error) {
		v, err := s.agentClient(req).CheckAutoApprove(policy.Action{Kind: in.Kind, Tool: in.Tool, Command: in.Command, File: in.File, URL: in.URL})
		if err != nil {
			return v, "", err
		}
		verdict := "asks a person"
		if v.Auto {
			verdict = "auto-approved"
		}
		return v, fmt.Sprintf("%s (risk %s): %s", verdict, v.Risk, v.Rule), nil
	})
}

type forwardPromptIn struct {
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	Timeout string `json:"timeout"`
}

func (s *Server) addForwardPrompt() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "forward_prompt", Title: "Ask the operator how to go on",
			Description: "Ask the operator how to go on, and wait. Use at the end of a turn, with a question, or after an error; blocks until the operator answers (`agentinfra answer ID continue|stop|refine TEXT`): status continued, refined (follow instruction), stopped (stop working), expired (an error_recovery prompt nobody answered: do not go on)."},
		Props: map[string]prop{
			"kind":    {Enum: supervision.PromptKinds, Desc: "continuation (default), clarification (a question), error_recovery, resource_warning."},
			"text":    {Desc: "What the operator reads: your question, the error, where you stand."},
			"timeout": agentTimeoutProp,
		},
		Required: []string{"text"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in forwardPromptIn, _ map[string]json.RawMessage) (agentside.Answer, string, error) {
		d, err := waitArg("timeout", in.Timeout)
		if err != nil {
			return agentside.Answer{}, "", err
		}
		a, err := s.agentClient(req).ForwardPrompt(ctx, agentside.Forward{Kind: in.Kind, Text: in.Text, Timeout: d}, progressOf(ctx, req))
		if err != nil {
			return a, "", err
		}
		text := fmt.Sprintf("prompt p%d: %s", a.PromptID, a.Status)
		if a.Instruction != "" {
			text += ": " + a.Instruction
		}
		return a, text, nil
	})
}

type waitIn struct {
	Timeout string `json:"timeout"`
}

func (s *Server) addWaitForInstruction() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "wait_for_instruction", Title: "Wait for the operator's next message",
			Description: "Wait for the operator's next message (`agentinfra steer SESSION TEXT`). Returns it (status message), or status timeout (default 10m)."},
		Props: map[string]prop{"timeout": {Desc: "Go duration (90s, 10m); default 10m."}},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in waitIn, _ map[string]json.RawMessage) (agentside.Instruction, string, error) {
		d, err := waitArg("timeout", in.Timeout)
		if err != nil {
			return agentside.Instruction{}, "", err
		}
		out, err := s.agentClient(req).WaitForInstruction(ctx, d, progressOf(ctx, req))
		if err != nil {
			return out, "", err
		}
		if out.Message == nil {
			return out, "no instruction came", nil
		}
		return out, "instruction: " + out.Message.Text, nil
	})
}

type heartbeatIn struct {
	Progress string `json:"progress"`
	Tool     string `json:"tool"`
}

func (s *Server) addHeartbeat() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "heartbeat", Title: "Report progress, get messages",
			Description: "Report your progress and get the operator's queued messages. The progress is the session's (people see it in `agentinfra session show ID`, the console); follow the messages."},
		Props: map[string]prop{
			"progress": {Desc: "One line: where you stand."},
			"tool":     {Desc: "What you are running now."},
		},
		Required: []string{"progress"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in heartbeatIn, _ map[string]json.RawMessage) (agentside.Beat, string, error) {
		b, err := s.agentClient(req).Heartbeat(ctx, in.Progress, in.Tool)
		if err != nil {
			return b, "", err
		}
		text := fmt.Sprintf("session %d %s; %d message(s)", b.SessionID, b.Status, len(b.Messages))
		for _, m := range b.Messages {
			text += "\n" + m.Text
		}
		return b, text, nil
	})
}

type remoteLogIn struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

func (s *Server) addRemoteLog() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "remote_log", Title: "Log to the session",
			Description: "Append a line to your session's audit log (`agentinfra session show ID`, the console)."},
		Props: map[string]prop{
			"level":   {Enum: agentside.LogLevels, Desc: "Default info."},
			"message": {},
		},
		Required: []string{"message"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in remoteLogIn, _ map[string]json.RawMessage) (map[string]any, string, error) {
		ses, err := s.agentClient(req).RemoteLog(ctx, in.Level, in.Message)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"session_id": ses.ID, "logged": true}, fmt.Sprintf("logged to session %d", ses.ID), nil
	})
}

type recoverStateIn struct {
	PreviousSession int64 `json:"previous_session"`
}

func (s *Server) addRecoverState() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "recover_state", Title: "Recover after a restart",
			Description: "What is still open from your session before a restart. Its requests (pending, or approved and not applied: accept_diff them), pending prompt, last checkpoint and progress; its undelivered messages move to your new session."},
		Props: map[string]prop{"previous_session": {Desc: "Your session before the restart; default: the newest of this client's."}},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in recoverStateIn, _ map[string]json.RawMessage) (agentside.State, string, error) {
		st, err := s.agentClient(req).RecoverState(ctx, in.PreviousSession)
		if err != nil {
			return st, "", err
		}
		text := fmt.Sprintf("session %d: nothing to recover", st.Session.ID)
		if st.Previous != nil {
			text = fmt.Sprintf("session %d recovered from %d: %d open request(s), %d message(s) moved", st.Session.ID, st.Previous.ID, len(st.Requests), st.MovedSteering)
		}
		return st, text, nil
	})
}

type modeIn struct {
	Mode string `json:"mode"`
}

func (s *Server) addSetOperationalMode() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{Name: "set_operational_mode", Title: "Where requests are answered",
			Description: "Set where your session's requests are answered. local (terminal and console), remote (Slack too), hybrid."},
		Props:    map[string]prop{"mode": {Enum: supervision.Modes}},
		Required: []string{"mode"},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in modeIn, _ map[string]json.RawMessage) (supervision.Session, string, error) {
		ses, err := s.agentClient(req).SetMode(ctx, in.Mode)
		if err != nil {
			return ses, "", err
		}
		return ses, fmt.Sprintf("session %d is %s", ses.ID, ses.Mode), nil
	})
}
