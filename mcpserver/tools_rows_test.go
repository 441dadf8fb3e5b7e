package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fix"
)

// A list reads continued rows whole and names the rows it could not read in
// warnings; with every row read there are no warnings.
func TestTaskListWarnings(t *testing.T) {
	ws := newWorkspace(t, 0)
	src, err := os.ReadFile(filepath.Join("..", "matrix", "testdata", "rows", "real.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.MatrixPath(), src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var list TaskOutput
	res := callOK(t, cs, "task", map[string]any{"action": "list", "limit": 0}, &list)
	var ids []string
	for _, tk := range list.Tasks {
		ids = append(ids, tk.ID)
	}
	if want := []string{"260120204151", "260120204152", "260120204153", "260121101500", "260121101501", "260121101502", "260121101505", "260121101506"}; !slices.Equal(ids, want) {
		t.Errorf("listed %v, want %v", ids, want)
	}
	want := []string{
		"line 32: row of task 260121101503 has 9 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column",
		"line 33: row of task 260121101504 has 11 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column",
		"line 40: lines 40-41 look like table rows but belong to no table (no header and |---| row above them)",
	}
	if !slices.Equal(list.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(list.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(text(res), "warning: line 33: row of task 260121101504") {
		t.Errorf("the text result does not carry the warnings:\n%s", text(res))
	}
	// How many rows are in no list, said once (issue 19): the two rows with
	// a wrong cell count, not the stray lines.
	if list.Skipped != 2 || !strings.Contains(text(res), "8 of 8 matching tasks; 2 rows of the matrix could not be read and are in no list") {
		t.Errorf("skipped = %d, text:\n%s", list.Skipped, text(res))
	}

	if err := os.WriteFile(ws.MatrixPath(), []byte("| ID | Status | Description |\n|---|---|---|\n| 260120204151 | TODO | one\ntwo |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list = TaskOutput{}
	callOK(t, cs, "task", map[string]any{"action": "list"}, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].Description != "one\ntwo" || list.Warnings != nil || list.Skipped != 0 {
		t.Errorf("clean matrix: %+v", list)
	}
}

// A duplicated ID: list warns about it, show refuses to pick a row (issue 19).
func TestTaskDuplicateID(t *testing.T) {
	ws := newWorkspace(t, 0)
	src := "| ID | Status | Pri | Description |\n|---|---|---|---|\n| T-1 | TODO | P1 | First. |\n| T-1 | DONE | P2 | Copied by hand. |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list"}, &list)
	if len(list.Tasks) != 2 || len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "line 4: duplicate ID T-1: also on line 3") {
		t.Errorf("list: %d tasks, warnings %q", len(list.Tasks), list.Warnings)
	}
	res := call(t, cs, "task", map[string]any{"action": "show", "id": "T-1"})
	if !res.IsError || !strings.Contains(text(res), "ID T-1 is on 2 rows (lines 3, 4)") {
		t.Errorf("show of a duplicated ID: error %v, %s", res.IsError, text(res))
	}
}

// Issue 19, items 4-6 over MCP: format_prompt keeps a Description's lines;
// after `validate --fix` (fix.Run, what the CLI calls) task show, the task
// resource and format_prompt read the row as before; create and update keep
// the line breaks they are given.
func TestDescriptionLinesOverMCP(t *testing.T) {
	ws := newWorkspace(t, 0)
	desc := "Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || ''; // never `undefined`\n```"
	src := "| ID | Status | Pri | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|---|\n" +
		"| 260121185712 | TODO | P2 | coder | Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || ''; // never `undefined`\n```  | 2026-01-21 | 2026-01-21 |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	ctx := context.Background()
	read := func() (show TaskOutput, resource TaskResource, prompt string) {
		callOK(t, cs, "task", map[string]any{"action": "show", "id": "260121185712"}, &show)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: TaskURIPrefix + "260121185712"})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &resource); err != nil {
			t.Fatal(err)
		}
		return show, resource, text(callOK(t, cs, "format_prompt", map[string]any{"id": "260121185712"}, nil))
	}
	show, resource, prompt := read()
	if show.Task.Description != desc || resource.Task.Description != desc || !strings.Contains(prompt, "## Description\n\n"+desc+"\n") {
		t.Fatalf("before the fix: show %q, resource %q, prompt:\n%s", show.Task.Description, resource.Task.Description, prompt)
	}
	if _, err := fix.Run(ctx, ws, fix.Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ws.MatrixPath()); !strings.Contains(string(b), "<br>` ```typescript `<br>") {
		t.Fatalf("not fixed:\n%s", b)
	}
	show2, resource2, prompt2 := read()
	if show2.Task.Description != desc || resource2.Task.Description != desc || prompt2 != prompt {
		t.Errorf("after the fix: show %q, resource %q, prompt:\n%s", show2.Task.Description, resource2.Task.Description, prompt2)
	}
	var out TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "create", "description": "a | b\nc", "mode": "coder"}, &out)
	if out.Task == nil || out.Task.Description != "a | b\nc" {
		t.Fatalf("create: %+v", out)
	}
	if b, _ := os.ReadFile(ws.MatrixPath()); !strings.Contains(string(b), "| a \\| b<br>c |") {
		t.Errorf("create wrote:\n%s", b)
	}
}

// Issue 19, item 13 over MCP: a task README that is a symlink out of the
// workspace is not read by task show, the task resource, format_prompt or a
// dry run of dispatch_task; each is an error naming the file, and nothing of
// its content reaches the client.
func TestSymlinkOutOfTheWorkspaceOverMCP(t *testing.T) {
	ws := newWorkspace(t, 0)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "| ID | Status | Pri | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|---|\n| a1 | TODO | P1 | coder | links out | 2026-01-01 | 2026-01-01 |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws.TasksDir(), "a1_links_out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"task", map[string]any{"action": "show", "id": "a1"}},
		{"format_prompt", map[string]any{"id": "a1"}},
		{"task_get_context", map[string]any{"id": "a1"}},
		{"dispatch_task", map[string]any{"id": "a1", "dry_run": true}},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), "outside the workspace") || strings.Contains(text(res), "TOP-SECRET") {
			t.Errorf("%s %v: error %v, %s", c.tool, c.args, res.IsError, text(res))
		}
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: TaskURIPrefix + "a1"})
	if err == nil || strings.Contains(fmt.Sprint(res), "TOP-SECRET") {
		t.Errorf("resource: %v, %v", res, err)
	}
}
