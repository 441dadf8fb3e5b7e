package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/task"
)

// DispatchInput is the input of dispatch_task: the options of `agentinfra
// dispatch`, by the same names.
type DispatchInput struct {
	ID           string     `json:"id"`
	CLI          string     `json:"cli,omitempty"`
	Mode         string     `json:"mode,omitempty"`
	Model        string     `json:"model,omitempty"`
	Timeout      string     `json:"timeout,omitempty"`
	ApprovalMode string     `json:"approval_mode,omitempty"`
	TaskOverride string     `json:"task_override,omitempty"`
	ContextFiles StringList `json:"context_files,omitempty"`
	SessionID    string     `json:"session_id,omitempty"`
	Force        bool       `json:"force,omitempty"`
	DryRun       bool       `json:"dry_run,omitempty"`
}

// The bounds of dispatch_task's timeout: an agent run shorter than a second
// cannot do anything, and one that needs more than four hours is not one
// task.
const (
	minDispatchTimeout = time.Second
	maxDispatchTimeout = 4 * time.Hour
)

func (s *Server) addDispatchTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "dispatch_task",
			Description: "Run a task (id) through an agent CLI headless and record the outcome: the row goes to " +
				"IN_PROGRESS, then REVIEW, or BLOCKED on failure; prompt and result are kept in the task's tracking/. " +
				"Refuses DONE and IN_PROGRESS tasks unless force. dry_run returns the plan (command, model and why, " +
				"prompt size). Sends progress to a progressToken; cancelling stops the agent.",
			Annotations: &mcp.ToolAnnotations{Title: "Dispatch task", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		},
		Props: map[string]prop{
			"id":            {},
			"cli":           {Enum: runner.CLIs, Default: runner.CLIGemini},
			"mode":          {Desc: "Instead of the task's mode."},
			"model":         {Desc: "Instead of select_model's choice."},
			"timeout":       {Desc: "Go duration, 1s to 4h.", Default: "30m"},
			"approval_mode": {Desc: "What the agent may do unasked.", Enum: runner.ApprovalModes, Default: runner.ApprovalDefault},
			"task_override": {Desc: "Text that replaces the task README."},
			"context_files": {Desc: "Workspace-relative files to include."},
			"session_id":    {Desc: "Resume this session (session_id of an earlier result)."},
			"force":         {},
			"dry_run":       {},
		},
		Required: []string{"id"},
	}, s.dispatchTool)
}

func (s *Server) dispatchTool(ctx context.Context, req *mcp.CallToolRequest, in DispatchInput, _ map[string]json.RawMessage) (dispatch.Outcome, string, error) {
	if _, _, err := s.task(ctx, in.ID); err != nil {
		return dispatch.Outcome{}, "", err
	}
	opts, err := s.dispatchOptions(ctx, in)
	if err != nil {
		return dispatch.Outcome{}, "", err
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
	out, err := dispatch.Run(ctx, s.ws, opts, onEvent)
	if err != nil {
		switch {
		case errors.Is(err, matrix.ErrNotFound), errors.Is(err, dispatch.ErrRefused), errors.Is(err, matrix.ErrRefused):
			return out, "", err // typed: errorResult names the field and the override
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

// dispatchOptions checks the input against the schema (enums, the timeout's
// bounds, paths inside the workspace, a mode that exists) and maps it to the
// options `agentinfra dispatch` builds from its flags.
func (s *Server) dispatchOptions(ctx context.Context, in DispatchInput) (dispatch.Options, error) {
	o := dispatch.Options{
		ID: strings.TrimSpace(in.ID), Mode: strings.TrimSpace(in.Mode), Model: strings.TrimSpace(in.Model),
		TaskOverride: in.TaskOverride, ContextFiles: in.ContextFiles, Session: strings.TrimSpace(in.SessionID),
		Force: in.Force, DryRun: in.DryRun, Now: s.opts.Now, Getenv: s.opts.Getenv, Actor: string(task.ActorFrom(ctx)),
	}
	var err error
	if in.CLI != "" {
		if o.CLI, err = enumValue("cli", in.CLI, runner.CLIs); err != nil {
			return o, err
		}
	}
	if in.ApprovalMode != "" {
		if o.ApprovalMode, err = enumValue("approval_mode", in.ApprovalMode, runner.ApprovalModes); err != nil {
			return o, err
		}
	}
	if t := strings.TrimSpace(in.Timeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			return o, fieldErrorf("timeout", "%q is not a duration; pass one like 90s, 10m or 1h30m", in.Timeout)
		}
		if d < minDispatchTimeout || d > maxDispatchTimeout {
			return o, fieldErrorf("timeout", "%s is out of bounds; pass %s to %s", d, minDispatchTimeout, maxDispatchTimeout)
		}
		o.Timeout = d
	}
	for i, p := range in.ContextFiles {
		if _, err := s.ws.Resolve(p); err != nil {
			return o, fieldErrorf(fmt.Sprintf("context_files[%d]", i), "%v", insideHint(err))
		}
	}
	if o.Mode != "" {
		if _, err := skills.LoadMode(ctx, s.ws, o.Mode); err != nil {
			return o, asField("mode", err)
		}
	}
	return o, nil
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
