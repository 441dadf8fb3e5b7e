package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// A task whose Mode names no file gets a prompt anyway, with a warning in the
// result; the task tool takes the workspace's aliases and writes the value.
func TestUnknownModeAndAliases(t *testing.T) {
	ws := newWorkspace(t, 1)
	id := loadTasks(t, ws)[0].ID
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("matrix:\n  aliases:\n    status: {underway: IN_PROGRESS}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := task.UpdateTask(context.Background(), ws, id, matrix.Update{Mode: matrix.Str("code")}, fixedNow, task.UpdateOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)

	var p PromptOutput
	callOK(t, cs, "format_prompt", map[string]any{"id": id}, &p)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `mode "code" of task `+id+" has no .agent/agents/code.md") || !strings.HasPrefix(p.Text, "# Agent mode: code\n") {
		t.Errorf("warnings %q, text:\n%s", p.Warnings, p.Text)
	}

	var out TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "underway"}, &out)
	if out.Task == nil || out.Task.Status != "IN_PROGRESS" {
		t.Errorf("update with a config alias: %+v", out)
	}
	if tk := loadTasks(t, ws)[0]; tk.Status != "IN_PROGRESS" {
		t.Errorf("row after update: %+v", tk)
	}
}
