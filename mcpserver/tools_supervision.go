package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/supervision"
)

// ToolsetSupervision is the read-only view of the supervised sessions.
const ToolsetSupervision = "supervision"

// registerSupervisionTools adds list_pending_approvals: what waits for a
// person, read-only. Deciding is deliberately not offered: an agent must
// not approve agents (people decide with `agentinfra approve|reject`).
func (s *Server) registerSupervisionTools() {
	schema := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	s.mcp.AddTool(&mcp.Tool{Name: "list_pending_approvals",
		Description: "Read-only: the approval requests of supervised agent runs that wait for a person (id, session, tool, command/file/url, risk, age). Agents cannot decide them; a person runs `agentinfra approve ID` or `agentinfra reject ID --reason TEXT`.",
		InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			o := supervision.Options{Getenv: s.opts.Getenv}
			if s.opts.Hosts != nil {
				o.Hosts = s.opts.Hosts(ctx)
			}
			svc, err := supervision.Open(ctx, s.ws, o)
			if err != nil {
				return errorResult(err, nil), nil
			}
			defer svc.Close()
			pending, err := svc.Pending(ctx)
			if err != nil {
				return errorResult(err, nil), nil
			}
			if pending == nil {
				pending = []supervision.PendingView{}
			}
			for i := range pending { // the tool input can be a whole file: the diff says what changes
				pending[i].ToolInput = ""
			}
			b, _ := json.Marshal(map[string]any{"pending": pending})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d pending approval requests", len(pending))}},
				StructuredContent: json.RawMessage(b)}, nil
		})
}
