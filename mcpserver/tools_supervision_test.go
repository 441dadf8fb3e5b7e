package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/store"
)

// An agent sees what waits for a person, and is offered no way to decide.
func TestPendingApprovalsReadOnly(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t, 3)
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ses, _ := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: ws.Root, CLI: "codex"})
	st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "shell", Command: "make deploy", Title: "Run make deploy", Risk: store.RiskHigh})
	st.Close()

	s, err := New(Options{Workspace: ws, Toolsets: []string{ToolsetSupervision}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "list_pending_approvals" || !tools.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("the supervision toolset: %+v", tools.Tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_pending_approvals", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var out struct {
		Pending []store.PendingView `json:"pending"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if len(out.Pending) != 1 || out.Pending[0].Command != "make deploy" || out.Pending[0].Risk != "high" {
		t.Fatalf("pending: %s", b)
	}
}
