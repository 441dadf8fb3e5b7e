package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/skills"
)

// DispatchInput is the input of dispatch_task.
type DispatchInput struct {
	ID           string     `json:"id"`
	Mode         string     `json:"mode,omitempty"`
	TaskOverride string     `json:"task_override,omitempty"`
	ContextFiles StringList `json:"context_files,omitempty"`
	SessionID    string     `json:"session_id,omitempty"`
	Model        string     `json:"model,omitempty"`
	DryRun       bool       `json:"dry_run,omitempty"`
}

func (s *Server) addDispatchTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "dispatch_task",
			Description: "Run a task through the gemini CLI headless: assemble its prompt, pick the model, move the row " +
				"to IN_PROGRESS, run the agent, record prompt and result under the task's tracking/, and move the row to " +
				"REVIEW (success) or BLOCKED (failure). Refuses DONE and IN_PROGRESS tasks. Sends progress notifications " +
				"when the request has a progressToken; cancelling the request stops the agent. dry_run shows what would run.",
			Annotations: &mcp.ToolAnnotations{Title: "Dispatch task", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		},
		Props: map[string]prop{
			"id":            {Desc: "Task ID to dispatch."},
			"mode":          {Desc: "Agent mode to use instead of the task's (a file .agent/agents/{mode}.md)."},
			"task_override": {Desc: "Instructions that replace the task README in the prompt."},
			"context_files": {Desc: "Workspace files to include in the prompt, fenced under their paths; relative to the workspace root, and must stay inside it."},
			"session_id":    {Desc: "Continue this earlier session of the agent CLI (the session_id of a previous result)."},
			"model":         {Desc: "Model name to use instead of select_model's choice, e.g. gemini-2.5-pro."},
			"dry_run":       {Desc: "Only report what would run (argv, model and why, prompt size); change nothing.", Default: false},
		},
		Required: []string{"id"},
	}, s.dispatchTool)
}

func (s *Server) dispatchTool(ctx context.Context, req *mcp.CallToolRequest, in DispatchInput, _ map[string]json.RawMessage) (dispatch.Outcome, string, error) {
	if _, err := s.task(ctx, in.ID); err != nil {
		return dispatch.Outcome{}, "", err
	}
	for i, p := range in.ContextFiles {
		if _, err := s.ws.Resolve(p); err != nil {
			return dispatch.Outcome{}, "", fieldErrorf(fmt.Sprintf("context_files[%d]", i), "%v", insideHint(err))
		}
	}
	if m := strings.TrimSpace(in.Mode); m != "" {
		if _, err := skills.LoadMode(ctx, s.ws, m); err != nil {
			return dispatch.Outcome{}, "", fieldErrorf("mode", "%v", err)
		}
	}
	var onEvent func(runner.Event)
	if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
		n := 0
		onEvent = func(e runner.Event) {
			n++
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: e.String(),
			})
		}
	}
	out, err := dispatch.Run(ctx, s.ws, dispatch.Options{
		ID: strings.TrimSpace(in.ID), Mode: strings.TrimSpace(in.Mode), Model: strings.TrimSpace(in.Model),
		TaskOverride: in.TaskOverride, ContextFiles: in.ContextFiles, Session: strings.TrimSpace(in.SessionID),
		DryRun: in.DryRun, Now: s.opts.Now, Getenv: s.opts.Getenv,
	}, onEvent)
	if err != nil {
		switch {
		case errors.Is(err, matrix.ErrNotFound), errors.Is(err, dispatch.ErrRefused):
			return out, "", &fieldError{Field: "id", Msg: err.Error()}
		case out.Outcome != "":
			return out, "", fmt.Errorf("dispatch %s %s: %w; the task is now %s; see %s", out.ID, out.Outcome, err, out.StatusAfter, out.TrackingFile)
		}
		return out, "", err
	}
	if out.Result != nil && out.Result.Argv == nil {
		out.Result.Argv = []string{}
	}
	return out, dispatchText(out), nil
}

func dispatchText(o dispatch.Outcome) string {
	var b strings.Builder
	if o.DryRun {
		fmt.Fprintf(&b, "dry run: would run %s with model %s (%s); prompt %d bytes\nargv: %s\n",
			o.CLI, mdtext.Or(o.Model, "-"), o.ModelReason, o.PromptBytes, strings.Join(o.Argv, " "))
		for _, w := range o.Warnings {
			fmt.Fprintf(&b, "warning: %s\n", w)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "task %s: %s; %s → %s; tracking %s\n", o.ID, o.Outcome, o.StatusBefore, o.StatusAfter, o.TrackingFile)
	if o.Result != nil {
		if o.Result.SessionID != "" {
			fmt.Fprintf(&b, "session_id: %s\n", o.Result.SessionID)
		}
		if o.Result.Response != "" {
			fmt.Fprintf(&b, "\n%s\n", o.Result.Response)
		}
	}
	return b.String()
}
