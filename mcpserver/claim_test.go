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

// Modes and skills follow one rule (issue 19): a mode with no file that no
// row uses is refused with force as the way out; once a row uses it, create
// and update succeed with the warning in warnings. update takes mode,
// difficulty, skills and description as create does.
func TestTaskUnknownModeRefusedLikeSkills(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	var out TaskOutput
	res := call(t, cs, "task", map[string]any{"action": "create", "description": "x", "mode": "codr"})
	if !res.IsError || !strings.Contains(text(res), "did you mean coder?") || !strings.Contains(text(res), "force") {
		t.Errorf("create with an unknown mode: %s", text(res))
	}
	res = callOK(t, cs, "task", map[string]any{"action": "create", "description": "x", "mode": "codr", "force": true}, &out)
	if out.Task == nil || out.Task.Mode != "codr" || len(out.Warnings) != 1 || !strings.Contains(text(res), "warning: mode \"codr\"") {
		t.Errorf("forced create with an unknown mode: %+v %s", out, text(res))
	}
	id := out.Task.ID
	callOK(t, cs, "task", map[string]any{"action": "create", "description": "y", "mode": "codr"}, &out)
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "did you mean coder?") {
		t.Errorf("create with a mode a row uses: %+v", out)
	}
	res = call(t, cs, "task", map[string]any{"action": "update", "id": id, "mode": "oracel"})
	if !res.IsError || !strings.Contains(text(res), "did you mean oracle?") {
		t.Errorf("update with an unknown mode: %s", text(res))
	}
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "mode": "oracle", "difficulty": "hard",
		"skills": []string{"later"}, "force": true, "description": "Two lines:\n```sh\nls | wc -l\n```"}, &out)
	if out.Task.Mode != "oracle" || out.Task.Difficulty != "hard" || strings.Join(out.Task.Skills, ",") != "later" ||
		out.Task.Description != "Two lines:\n```sh\nls | wc -l\n```" || strings.Join(out.Changed, ",") != "difficulty,mode,skills,description" {
		t.Errorf("update of mode, difficulty, skills, description: %+v", out)
	}
}

// A claim on a matrix without an Agents column (issue 19): the holder is
// recorded in the task README, returned as holder, and shown by show; a
// second agent is refused naming it.
func TestClaimWithoutAgentsColumn(t *testing.T) {
	ws := newWorkspace(t, 0)
	src := "| ID | Status | Pri | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|---|\n" +
		"| 260121185711 | TODO | P1 | coder | First. | 2026-01-21 | 2026-01-21 |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var out TaskOutput
	res := callOK(t, cs, "task", map[string]any{"action": "claim", "id": "260121185711", "agent": "@papi"}, &out)
	if out.Holder != "@papi" || out.Task.Status != "IN_PROGRESS" || !strings.Contains(text(res), "claimed task 260121185711 for @papi") {
		t.Errorf("claim: %+v %s", out, text(res))
	}
	res = call(t, cs, "task", map[string]any{"action": "claim", "id": "260121185711", "agent": "@other"})
	if !res.IsError || !strings.Contains(text(res), "held by @papi") {
		t.Errorf("second claim: %s", text(res))
	}
	out = TaskOutput{}
	res = callOK(t, cs, "task", map[string]any{"action": "show", "id": "260121185711"}, &out)
	if out.Holder != "@papi" || !strings.Contains(out.Readme, "claimed by @papi") || !strings.Contains(text(res), "Agents: @papi (holder") {
		t.Errorf("show: %+v\n%s", out, text(res))
	}
}
