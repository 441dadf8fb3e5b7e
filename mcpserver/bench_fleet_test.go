package mcpserver

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/workspace"
)

// fleetOf50 is a workspace with 50 idle agents (no metadata), each made by
// Create with its own worktree and a finished spec run (the stub agent).
func fleetOf50(b *testing.B) *workspace.Workspace {
	ws := fleetWorkspace(b, 0)
	stub := agentstub.Named(b, "gemini")
	f := local.New(ws, local.Options{SupervisorArgv: []string{agentinfraBin(b), "agent", "run-supervisor"}, Binary: stub, Env: []string{"STUB_MODE=ok"}})
	ctx := context.Background()
	for i := range 50 {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: fmt.Sprintf("a%d", i), Spec: "s"}); err != nil {
			b.Fatal(err)
		}
	}
	poll.EventuallyNil(b, func() error {
		if idle, _ := f.List(ctx, fleet.ListFilter{Status: "idle"}); len(idle) != 50 {
			return fmt.Errorf("only %d of 50 agents idle", len(idle))
		}
		return nil
	})
	return ws
}

// benchListAgents calls list_agents b.N times and reports the p50 and p99.
func benchListAgents(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatal(err, text(res))
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkMCPListAgents calls list_agents over the in-memory transport on
// a fleet of 50 idle agents and reports the p50 and p99 latencies.
func BenchmarkMCPListAgents(b *testing.B) {
	ws := fleetOf50(b)
	ctx := context.Background()
	srv, err := New(Options{Workspace: serverWS(b, ws), Getenv: testGetenv, Toolsets: []string{ToolsetFleet}})
	if err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := srv.MCP().Connect(ctx, st, nil)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchListAgents(b, cs)
}

// BenchmarkMCPListAgentsStdio is BenchmarkMCPListAgents against the built
// `agentinfra serve` process over stdio, as an MCP client sees it.
func BenchmarkMCPListAgentsStdio(b *testing.B) {
	ws := fleetOf50(b)
	cmd := exec.Command(agentinfraBin(b), "serve", "--toolsets", "fleet")
	cmd.Env = append(serveEnv(), "AGENTINFRA_ROOT="+ws.Root)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchListAgents(b, cs)
}
