package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/backends"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/review"
)

// Toolsets the server can expose (serve --toolsets).
const (
	ToolsetMatrix = "matrix"
	ToolsetFleet  = "fleet"
)

// Toolsets lists the toolsets; all but the opt-in ones are on by default.
var Toolsets = []string{ToolsetMatrix, ToolsetFleet, ToolsetSupervision, ToolsetAgent}

// optInToolsets are off unless named.
var optInToolsets = []string{ToolsetAgent}

// CheckToolsets refuses an unknown toolset name.
func CheckToolsets(sets []string) error {
	for _, s := range sets {
		if !slices.Contains(Toolsets, s) {
			return fmt.Errorf("unknown toolset %q: use %s", s, strings.Join(Toolsets, ","))
		}
	}
	return nil
}

func hasToolset(sets []string, name string) bool {
	if len(sets) == 0 {
		return !slices.Contains(optInToolsets, name)
	}
	return slices.Contains(sets, name)
}

// fleetTool is one fleet tool: its flat parameters (name → JSON schema
// type and description), the required ones, and its logic.
type fleetTool struct {
	name, title, desc string
	params            []fleetParam
	required          []string
	readOnly          bool
	destructive       bool
	run               func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error)
}

type fleetParam struct{ name, typ, desc string }

// fleetArgs are the decoded arguments of a fleet tool.
type fleetArgs struct {
	Name            string `json:"name"`
	Project         string `json:"project"`
	Role            string `json:"role"`
	Spec            string `json:"spec"`
	StatusFilter    string `json:"status_filter"`
	ProjectFilter   string `json:"project_filter"`
	AgentName       string `json:"agent_name"`
	Page            *int   `json:"page"`
	PageSize        *int   `json:"page_size"`
	TaskDescription string `json:"task_description"`
	TaskID          string `json:"task_id"`
	IncludeMetadata *bool  `json:"include_metadata"`
	RunID           string `json:"run_id"`
	Tail            *int   `json:"tail"`
	CLI             string `json:"cli"`
	Force           bool   `json:"force"`
	Next            bool   `json:"next"`
	ApprovalMode    string `json:"approval_mode"`
	// The review tool's.
	Action   string                `json:"action"`
	Comments []review.CommentInput `json:"comments"`
	Strategy string                `json:"strategy"`
}

var (
	pAgent    = fleetParam{"agent_name", "string", "agent name"}
	pApproval = fleetParam{"approval_mode", "string", "default | auto_edit | yolo | ask (ask: every permission request the workspace policy does not allow waits for a person's `agentinfra approve`); default: the fleet config's"}
)

func fleetTools() []fleetTool {
	return []fleetTool{{
		name: "create_agent", title: "Create agent",
		desc: "Create a named agent with its own git worktree and branch (agent/NAME); it starts working on its spec at once. Name: 1-20 letters, digits, single hyphens (1-32 on Coder).",
		params: []fleetParam{{"name", "string", "unique agent name"}, {"project", "string", "from list_agent_projects"},
			{"role", "string", "from list_agent_roles; default coder"}, {"spec", "string", "standing objective"},
			{"cli", "string", "gemini, claude or codex; default from config"}, pApproval},
		required: []string{"name", "project", "spec"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			a, err := f.Create(ctx, fleet.CreateInput{Name: in.Name, Project: in.Project, Role: in.Role, Spec: in.Spec, CLI: in.CLI, Source: fleet.SourceAIController, ApprovalMode: in.ApprovalMode})
			if err != nil {
				return nil, err
			}
			return fleet.NewCreateResult(a), nil
		},
	}, {
		name: "list_agents", title: "List agents", readOnly: true,
		desc: "List agents: status (idle, busy, waiting for a person — with what waits —, ...), current task, listed workspace metadata.",
		params: []fleetParam{{"status_filter", "string", "e.g. idle"}, {"project_filter", "string", "project name"},
			{"include_metadata", "boolean", "default true"}},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			as, err := f.List(ctx, fleet.ListFilter{Status: in.StatusFilter, Project: in.ProjectFilter})
			if err != nil {
				return nil, err
			}
			if in.IncludeMetadata == nil || *in.IncludeMetadata {
				f.WithMetadata(ctx, as, metadata.ListFields)
			}
			return fleet.NewListResult(as), nil
		},
	}, {
		name: "show_agent", title: "Show agent", readOnly: true,
		desc:   "One agent: status, current task, worktree, spec, workspace metadata.",
		params: []fleetParam{pAgent}, required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			a, err := f.Show(ctx, in.AgentName)
			if err != nil {
				return nil, err
			}
			as := []fleet.Agent{a}
			f.WithMetadata(ctx, as, metadata.AllFields)
			return fleet.NewShowResult(as[0]), nil
		},
	}, {
		name: "show_agent_task_history", title: "Agent task history", readOnly: true,
		desc:     "An agent's task runs, newest first, paginated.",
		params:   []fleetParam{pAgent, {"page", "integer", "from 1"}, {"page_size", "integer", "1-100, default 20"}},
		required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			page, size := 1, fleet.DefaultPageSize
			if in.Page != nil {
				page = *in.Page
			}
			if in.PageSize != nil {
				size = *in.PageSize
			}
			return f.History(ctx, in.AgentName, page, size)
		},
	}, {
		name: "show_agent_logs", title: "Agent run log", readOnly: true,
		desc:     "What an agent's CLI printed in a run: messages, tool calls and results, errors. Default: the current run, else the last.",
		params:   []fleetParam{pAgent, {"run_id", "string", "from the history"}, {"tail", "integer", "last N items, default 100, 0 all"}},
		required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			lr, ok := f.(fleet.LogReader)
			if !ok {
				return nil, fleet.NoLogs("coder")
			}
			tail := 100
			if in.Tail != nil {
				tail = *in.Tail
			}
			return lr.Logs(ctx, in.AgentName, in.RunID, tail)
		},
	}, {
		name: "delete_agent", title: "Delete agent", destructive: true,
		desc:   "Stop an agent and remove its worktree; its branch is kept under an archive name (the name is free again), its history archived. Uncommitted changes: refused unless force.",
		params: []fleetParam{pAgent, {"force", "boolean", "discard uncommitted changes"}}, required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			d, err := f.Delete(ctx, in.AgentName, in.Force)
			if err != nil {
				return nil, err
			}
			return fleet.NewDeleteResult(d), nil
		},
	}, {
		name: "start_agent_task", title: "Start agent task",
		desc: "Give an idle agent a task: a description, a matrix task_id (claimed; a BLOCKED one reopened) or next (the top ready task). Answers once it runs; the run goes on detached and ends the task in REVIEW or BLOCKED. Busy agent: 409.",
		params: []fleetParam{pAgent, {"task_description", "string", "what to do; with task_id or next, a note"},
			{"task_id", "string", "matrix task ID"}, {"next", "boolean", "take the top ready task"}, pApproval},
		required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			si := fleet.StartInput{Name: in.AgentName, Text: in.TaskDescription, Source: fleet.SourceAIController, ApprovalMode: in.ApprovalMode}
			switch {
			case strings.TrimSpace(in.TaskID) != "":
				si.Text, si.TaskID, si.Note, si.Next = "", in.TaskID, in.TaskDescription, in.Next
			case in.Next:
				si.Text, si.Next, si.Note = "", true, in.TaskDescription
			}
			return fleet.StartAgent(ctx, f, si, 0)
		},
	}, {
		name: "stop_agent_task", title: "Stop agent task", destructive: true,
		desc:   "Stop an agent's current run; the agent becomes idle.",
		params: []fleetParam{pAgent}, required: []string{"agent_name"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			return fleet.StopAgent(ctx, f, in.AgentName)
		},
	}, {
		name: "list_agent_roles", title: "List agent roles", readOnly: true,
		desc:   "Roles an agent can take.",
		params: []fleetParam{{"project", "string", "project name"}}, required: []string{"project"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			rs, err := f.Roles(ctx, in.Project)
			if err != nil {
				return nil, err
			}
			return fleet.RolesResult{Roles: rs}, nil
		},
	}, {
		name: "list_agent_projects", title: "List agent projects", readOnly: true,
		desc: "Projects agents can work in.",
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			ps, err := f.Projects(ctx)
			if err != nil {
				return nil, err
			}
			return fleet.ProjectsResult{Projects: ps}, nil
		},
	}}
}

// registerFleetTools adds the ten fleet tools and review. They hold no
// state: each call reads the fleet's files, and runs live in their own
// supervisors.
func (s *Server) registerFleetTools() {
	for _, ft := range append(fleetTools(), s.reviewTool()) {
		props := map[string]any{}
		names := []string{}
		for _, p := range ft.params {
			ps := map[string]any{"type": p.typ}
			if p.desc != "" {
				ps["description"] = p.desc
			}
			props[p.name] = ps
			names = append(names, p.name)
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(ft.required) > 0 {
			schema["required"] = ft.required
		}
		ann := &mcp.ToolAnnotations{Title: ft.title, OpenWorldHint: ptr(false)}
		if ft.readOnly {
			ann.ReadOnlyHint = true
		} else {
			ann.DestructiveHint = ptr(ft.destructive)
		}
		s.mcp.AddTool(&mcp.Tool{Name: ft.name, Description: ft.desc, InputSchema: schema, Annotations: ann},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				in, err := decodeFleetArgs(req.Params.Arguments, names, ft.required)
				if err != nil {
					return errorResult(err, names), nil
				}
				fl, err := backends.Open(s.ws, backends.Options{Fleet: s.fleetOptions(), Getenv: s.opts.Getenv})
				if err != nil {
					return errorResult(err, names), nil
				}
				// What the call did about a killed command's leftovers (and
				// records it could not read) goes into the result's warnings.
				ctx, notes := fleet.WithNotices(ctx)
				out, err := ft.run(ctx, fl, in)
				if err != nil {
					return withResultWarnings(errorResult(err, names), notes.Texts()), nil
				}
				out = fleet.WithWarnings(out, notes.Texts())
				b, err := json.Marshal(out)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
			})
	}
}

func (s *Server) fleetOptions() local.Options {
	o := s.opts.Fleet
	if o.Now == nil {
		o.Now = s.opts.Now
	}
	return o
}

// decodeFleetArgs decodes flat arguments, refusing unknown names, wrong
// types and missing required ones with a 400 that names the field.
func decodeFleetArgs(args json.RawMessage, names, required []string) (fleetArgs, error) {
	var in fleetArgs
	raw := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(args); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &raw); err != nil {
			return in, agenterr.Invalidf("arguments", "arguments must be a JSON object")
		}
	}
	for k, v := range raw {
		if !slices.Contains(names, k) {
			msg := fmt.Sprintf("unknown parameter %q", k)
			if len(names) > 0 {
				msg += "; the parameters are " + strings.Join(names, ", ")
			}
			return in, agenterr.Invalidf(k, "%s", msg)
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if err := json.Unmarshal(one, &in); err != nil {
			return in, agenterr.Invalidf(k, "%s must be %s", k, jsonKind(k))
		}
	}
	for _, k := range required {
		if v, ok := raw[k]; !ok || bytes.Equal(v, []byte(`""`)) || bytes.Equal(v, []byte("null")) {
			return in, agenterr.Invalidf(k, "%s is required", k)
		}
	}
	return in, nil
}

func jsonKind(k string) string {
	switch k {
	case "page", "page_size", "tail":
		return "an integer"
	case "include_metadata", "force", "next":
		return "a boolean"
	case "comments":
		return "an array of {text, file, line}"
	}
	return "a string"
}
