package mcpserver

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// listLatencies connects to a workspace holding a 1,000-row matrix and times
// n tools/call task list calls (default limit 10) over the in-memory transport.
func listLatencies(tb testing.TB, n int, args map[string]any) (srv *Server, durs []time.Duration) {
	ws := newWorkspace(tb, 0)
	if err := os.WriteFile(ws.MatrixPath(), testmatrix.Generate(1000, 1), 0o644); err != nil {
		tb.Fatal(err)
	}
	srv, cs := connect(tb, ws, nil)
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "task", Arguments: args}
	for i := range n + 1 {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || res.IsError {
			tb.Fatalf("list: %v %v", err, res)
		}
		if i > 0 { // the first call parses the matrix
			durs = append(durs, d)
		}
	}
	slices.Sort(durs)
	return srv, durs
}

func pct(d []time.Duration, p float64) time.Duration { return d[int(float64(len(d)-1)*p)] }

// BenchmarkTaskList1000 reports the p50 of tools/call task list on a
// 1,000-row matrix through the in-memory transport (cached matrix).
func BenchmarkTaskList1000(b *testing.B) {
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"default", map[string]any{"action": "list"}},
		{"status_TODO_all", map[string]any{"action": "list", "status": "TODO", "limit": 0}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ws := newWorkspace(b, 0)
			if err := os.WriteFile(ws.MatrixPath(), testmatrix.Generate(1000, 1), 0o644); err != nil {
				b.Fatal(err)
			}
			srv, cs := connect(b, ws, nil)
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "task", Arguments: c.args}
			if _, err := cs.CallTool(ctx, params); err != nil { // parse once
				b.Fatal(err)
			}
			durs := make([]time.Duration, 0, 1024)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				res, err := cs.CallTool(ctx, params)
				durs = append(durs, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("list: %v", err)
				}
			}
			b.StopTimer()
			slices.Sort(durs)
			b.ReportMetric(float64(pct(durs, 0.5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(pct(durs, 0.99).Microseconds())/1000, "p99-ms")
			if srv.MatrixLoads() != 1 {
				b.Errorf("matrix parsed %d times; the cache should parse it once", srv.MatrixLoads())
			}
		})
	}
}

// Repeated lists on 1,000 rows are served from the cached parse. The latency
// target (p50 under 2 ms) is shown by BenchmarkTaskList1000 and in README,
// not asserted here: a timed assertion fails on a loaded machine.
func TestTaskList1000ServedFromCache(t *testing.T) {
	srv, durs := listLatencies(t, 100, map[string]any{"action": "list"})
	t.Logf("tools/call task list, 1,000 rows, in-memory transport: p50 %v, p99 %v over %d calls", pct(durs, 0.5), pct(durs, 0.99), len(durs))
	if n := srv.MatrixLoads(); n != 1 {
		t.Errorf("matrix parsed %d times for %d calls; want 1 (cached)", n, len(durs)+1)
	}
}
