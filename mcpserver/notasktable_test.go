package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An older-format matrix (Item tables, no task table) is an error for list
// and create, never an empty list, and the error says how to convert it.
func TestTaskToolOnOlderFormatMatrix(t *testing.T) {
	ws := newWorkspace(t, 1) // written once: the lock file exists
	src, err := os.ReadFile(filepath.Join("..", "matrix", "testdata", "legacy", "old_items.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.MatrixPath(), src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	before := treeHash(t, ws.Root)
	for _, args := range []map[string]any{
		{"action": "list"},
		{"action": "list", "status": "TODO", "limit": 0},
		{"action": "create", "description": "New thing", "mode": "coder"},
	} {
		res := call(t, cs, "task", args)
		msg := text(res)
		if !res.IsError {
			t.Errorf("task %v on an older-format matrix: no error; %s", args, msg)
			continue
		}
		for _, want := range []string{"no task table (a table whose header has ID and Status columns)", "older format, 154 items in 5",
			"ask the user to run `agentinfra migrate --dry-run`", "then `agentinfra migrate`"} {
			if !strings.Contains(msg, want) {
				t.Errorf("task %v: message lacks %q: %s", args, want, msg)
			}
		}
		if after := treeHash(t, ws.Root); after != before {
			t.Fatalf("task %v changed the workspace", args)
		}
	}
	// Once converted, the same server lists the items.
	if err := os.WriteFile(ws.MatrixPath(), []byte("| ID | Status | Description |\n|---|---|---|\n| a1b2c3 | TODO | migrated |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list"}, &list)
	if list.Total != 1 || list.Tasks[0].ID != "a1b2c3" {
		t.Errorf("after conversion: %+v", list)
	}
}
