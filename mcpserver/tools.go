package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/handoff"
)

func (s *Server) registerTools() error {
	for _, add := range []func() error{
		s.addTaskTool,
		s.addContextTool,
		s.addSkillTool,
		s.addPromptTool,
		s.addModelTool,
		s.addHandoffTool,
		s.addDispatchTool,
	} {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}

// ---- handoff_generate ----

// HandoffInput is the (empty) input of handoff_generate.
type HandoffInput struct{}

// HandoffOutput is the result of handoff_generate.
type HandoffOutput struct {
	// Path is the handoff file written, relative to the workspace root.
	Path   string         `json:"path"`
	Report handoff.Report `json:"report"`
}

func (s *Server) addHandoffTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "handoff_generate",
			Description: "Write a handoff note for the next session to .agent/handoffs/: tasks in progress, in " +
				"review and blocked with their latest note, recently done, next up, git branch, uncommitted files, " +
				"last commits.",
			Annotations: &mcp.ToolAnnotations{Title: "Generate handoff", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		},
		Props: map[string]prop{},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ HandoffInput, _ map[string]json.RawMessage) (HandoffOutput, string, error) {
		d, err := s.doc(ctx)
		if err != nil {
			return HandoffOutput{}, "", err
		}
		p, r, err := handoff.Write(ctx, s.ws, s.opts.Now(), handoff.Options{Doc: d})
		if err != nil {
			return HandoffOutput{}, "", err
		}
		out := HandoffOutput{Path: s.rel(p), Report: r}
		return out, "wrote " + out.Path + "\n\n" + r.Text, nil
	})
}
