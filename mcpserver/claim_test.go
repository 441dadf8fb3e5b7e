package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Twenty agents claim one TODO task at once through MCP, half through one
// server and half through servers of their own (as separate clients would):
// exactly one wins, every other call is a tool error naming the winner, the
// matrix validates and the README logs one claim.
func TestClaimConcurrentOneWinner(t *testing.T) {
	const n = 20
	ws := newWorkspace(t, 1)
	id := loadTasks(t, ws)[0].ID
	_, shared := connect(t, ws, nil)
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		sessions[i] = shared
		if i%2 == 1 {
			_, sessions[i] = connect(t, ws, nil)
		}
	}
	type result struct {
		agent string
		res   *mcp.CallToolResult
		err   error
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("@agent-%02d", i)
			<-start
			res, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "task",
				Arguments: map[string]any{"action": "claim", "id": id, "agent": agent}})
			results <- result{agent, res, err}
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	var winners []string
	var refused []string
	for r := range results {
		switch {
		case r.err != nil:
			t.Errorf("%s: protocol error %v", r.agent, r.err)
		case r.res.IsError:
			refused = append(refused, errMessage(t, r.res))
		default:
			winners = append(winners, r.agent)
		}
	}
	if len(winners) != 1 || len(refused) != n-1 {
		t.Fatalf("winners %v, refusals %q", winners, refused)
	}
	for _, msg := range refused {
		if want := fmt.Sprintf("task %s is IN_PROGRESS, held by %s", id, winners[0]); msg != want {
			t.Errorf("refusal %q, want %q", msg, want)
		}
	}
	src, _ := os.ReadFile(ws.MatrixPath())
	d := matrix.Parse(src)
	if ds := task.Validate(ws, d, "m", testGetenv); matrix.HasErrors(ds) {
		t.Errorf("matrix after the claims: %v", ds)
	}
	if tk, _ := d.Task(id); tk.Status != "IN_PROGRESS" || tk.Agents[len(tk.Agents)-1] != winners[0] {
		t.Errorf("row after the claims: %+v", tk)
	}
	dir, _ := task.Folder(ws, d, id)
	b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if c := strings.Count(string(b), "status TODO → IN_PROGRESS"); c != 1 {
		t.Errorf("README has %d TODO → IN_PROGRESS lines:\n%s", c, b)
	}
	// The winner claiming again changes nothing and says so.
	var out TaskOutput
	res := callOK(t, shared, "task", map[string]any{"action": "claim", "id": id, "agent": winners[0]}, &out)
	if len(out.Changed) != 0 || out.Task.Status != "IN_PROGRESS" || !strings.Contains(text(res), "already IN_PROGRESS, held by "+winners[0]) {
		t.Errorf("claim by the holder: %+v %s", out, text(res))
	}
}

// create and update with a mode that has no file succeed and return the
// warning in warnings; an unknown skill is refused with force as the way out.
func TestTaskUnknownModeWarns(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	var out TaskOutput
	res := callOK(t, cs, "task", map[string]any{"action": "create", "description": "x", "mode": "codr"}, &out)
	if out.Task == nil || out.Task.Mode != "codr" || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "did you mean coder?") ||
		!strings.Contains(text(res), "warning: mode \"codr\"") {
		t.Errorf("create with an unknown mode: %+v %s", out, text(res))
	}
	callOK(t, cs, "task", map[string]any{"action": "update", "id": out.Task.ID, "set_fields": map[string]string{"Mode": "oracel"}}, &out)
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "did you mean oracle?") {
		t.Errorf("update with an unknown mode: %+v", out)
	}
	callOK(t, cs, "task", map[string]any{"action": "create", "description": "y", "mode": "coder", "skills": []string{"later"}, "force": true}, &out)
	if out.Task == nil || strings.Join(out.Task.Skills, ",") != "later" {
		t.Errorf("forced unknown skill: %+v", out)
	}
}
