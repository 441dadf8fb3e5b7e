package mcpserver

import (
	"os"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
)

func TestTaskListReady(t *testing.T) {
	ws := newWorkspace(t, 0)
	src := `# M

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|---|---|---|---|---|---|---|---|---|---|---|
| a1b2c3 | DONE | P2 | med | coder | | | Parser | 2026-11-01 | 2026-11-02 | |
| b2c3d4 | TODO | P1 | med | coder | | | Uses it | 2026-11-01 | 2026-11-02 | a1b2c3 |
| c3d4e5 | TODO | P0 | med | coder | | | Waits | 2026-11-01 | 2026-11-02 | b2c3d4 |
`
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var out struct {
		Tasks []matrix.Task `json:"tasks"`
	}
	callOK(t, cs, "task", map[string]any{"action": "list", "ready": true}, &out)
	if len(out.Tasks) != 1 || out.Tasks[0].ID != "b2c3d4" {
		t.Fatalf("ready tasks = %+v", out.Tasks)
	}
	callOK(t, cs, "task", map[string]any{"action": "list"}, &out)
	if len(out.Tasks) != 3 {
		t.Fatalf("without ready: %d tasks", len(out.Tasks))
	}
}

// The ready queue is by priority, a task with none last (issue 19).
func TestTaskListReadyNoPriorityLast(t *testing.T) {
	ws := newWorkspace(t, 0)
	src := "| ID | Status | Pri | Description |\n|---|---|---|---|\n| a1 | TODO |  | none |\n| b2 | TODO | P3 | low |\n| c3 | TODO | - | dash |\n| d4 | TODO | P1 | urgent |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var out struct {
		Tasks []matrix.Task `json:"tasks"`
	}
	callOK(t, cs, "task", map[string]any{"action": "list", "ready": true}, &out)
	var ids []string
	for _, tk := range out.Tasks {
		ids = append(ids, tk.ID)
	}
	if strings.Join(ids, ",") != "d4,b2,a1,c3" {
		t.Errorf("ready queue %v, want d4,b2,a1,c3", ids)
	}
}
