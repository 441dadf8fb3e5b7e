package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/task"
)

func TestToolsListContract(t *testing.T) {
	ws := newWorkspace(t, 0)
	_, cs := connect(t, ws, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Errorf("%s: no description", tl.Name)
		}
		if _, ok := outputSchemas[tl.Name]; !ok {
			t.Errorf("%s: its result type is not in outputSchemas", tl.Name)
		}
		if tl.Annotations == nil {
			t.Errorf("%s: no annotations", tl.Name)
		}
		// A model learns what each parameter is for: from its description,
		// its enum, or the tool's description, which names it.
		var in struct {
			Properties map[string]struct {
				Description string `json:"description"`
				Enum        []any  `json:"enum"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tl.InputSchema)
		json.Unmarshal(b, &in)
		for p, s := range in.Properties {
			named := regexp.MustCompile(`(^|[^a-z_])` + p + `([^a-z_]|$)`).MatchString(tl.Description)
			if s.Description == "" && len(s.Enum) == 0 && !named {
				t.Errorf("%s.%s: neither described, nor an enum, nor named in the tool's description", tl.Name, p)
			}
		}
	}
	slices.Sort(names)
	want := []string{"dispatch_task", "format_prompt", "handoff_generate", "select_model", "skill", "task", "task_get_context"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	// Enums and defaults are in the schemas.
	schema := func(tool, prop string) map[string]any {
		b, _ := json.Marshal(findTool(t, cs, tool).InputSchema)
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		json.Unmarshal(b, &s)
		return s.Properties[prop]
	}
	checks := []struct {
		tool, prop string
		enum       []any
		def        any
	}{
		{"task", "action", []any{"create", "update", "claim", "list", "archive", "scaffold", "show", "validate"}, nil},
		{"task", "status", []any{"TODO", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE"}, nil},
		{"task", "priority", []any{"P1", "P2", "P3", "P4"}, nil},
		{"task", "difficulty", []any{"easy", "med", "hard"}, nil},
		{"skill", "action", []any{"list", "load"}, nil},
		{"skill", "format", []any{"full", "summary", "instructions_only"}, nil},
		{"select_model", "difficulty", []any{"easy", "med", "hard"}, nil},
		{"dispatch_task", "cli", []any{"gemini", "claude", "codex"}, "gemini"},
		{"dispatch_task", "approval_mode", []any{"default", "auto_edit", "yolo", "ask"}, "default"},
		{"dispatch_task", "timeout", nil, "30m"},
	}
	for _, c := range checks {
		s := schema(c.tool, c.prop)
		if s == nil {
			t.Errorf("%s has no parameter %s", c.tool, c.prop)
			continue
		}
		if c.enum != nil && !slices.Equal(toAnySlice(s["enum"]), c.enum) {
			t.Errorf("%s.%s enum = %v, want %v", c.tool, c.prop, s["enum"], c.enum)
		}
		if c.def != nil && s["default"] != c.def {
			t.Errorf("%s.%s default = %v, want %v", c.tool, c.prop, s["default"], c.def)
		}
	}
	// A tool with actions declares no default: clients fill defaults in, and
	// one would reach every action (task list filtered by priority P2, an
	// update setting it, skill list refusing a format).
	for _, tool := range []string{"task", "skill"} {
		b, _ := json.Marshal(findTool(t, cs, tool).InputSchema)
		var in struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		json.Unmarshal(b, &in)
		for prop, s := range in.Properties {
			if d, ok := s["default"]; ok {
				t.Errorf("%s.%s declares default %v; a tool with actions must not", tool, prop, d)
			}
		}
	}
	for _, p := range []string{"skills", "set_fields"} {
		if typ := schema("task", p)["type"]; typ != map[string]string{"skills": "array", "set_fields": "object"}[p] {
			t.Errorf("task.%s type = %v; clients need a plain type", p, typ)
		}
	}

	// Read-only hints on the tools that change nothing; task and handoff write.
	for _, name := range []string{"task_get_context", "skill", "format_prompt", "select_model"} {
		if a := findTool(t, cs, name).Annotations; !a.ReadOnlyHint {
			t.Errorf("%s: readOnlyHint false", name)
		}
	}
	for _, name := range []string{"task", "handoff_generate", "dispatch_task"} {
		a := findTool(t, cs, name).Annotations
		if a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("%s: want readOnlyHint false and destructiveHint false, got %+v", name, a)
		}
	}
}

func toAnySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestTaskLifecycle(t *testing.T) {
	ws := newWorkspace(t, 0)
	_, cs := connect(t, ws, nil)

	// Empty matrix: tasks is [], not null.
	res := callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"tasks":[]`) {
		t.Errorf("empty list: %s, want \"tasks\":[]", b)
	}

	var created TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "create", "description": "Add retry to fetcher", "mode": "coder",
		"skills": []string{"go-testing"}, "slug": "retry"}, &created)
	if created.Task == nil || created.Task.Status != "TODO" || created.Task.Priority != "P2" || created.Task.Difficulty != "med" {
		t.Fatalf("created = %+v; want a TODO P2 med row", created.Task)
	}
	id := created.Task.ID
	if created.Dir != ".agent/tasks/"+id+"_retry" {
		t.Errorf("dir = %q", created.Dir)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, created.Dir, "README.md")); err != nil {
		t.Errorf("task folder not scaffolded: %v", err)
	}
	rows := loadTasks(t, ws)
	if len(rows) != 1 || rows[0].ID != id || rows[0].Description != "Add retry to fetcher" || !slices.Equal(rows[0].Skills, []string{"go-testing"}) {
		t.Fatalf("matrix on disk = %+v", rows)
	}

	callOK(t, cs, "task", map[string]any{"action": "create", "description": "Write docs", "mode": "reviewer", "priority": "P1", "difficulty": "easy"}, nil)

	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list", "priority": "P1"}, &list)
	if list.Total != 1 || len(list.Tasks) != 1 || list.Tasks[0].Description != "Write docs" {
		t.Errorf("list priority P1 = %+v", list)
	}
	callOK(t, cs, "task", map[string]any{"action": "list", "limit": 1}, &list)
	if list.Total != 2 || len(list.Tasks) != 1 {
		t.Errorf("limit 1: total %d, %d rows; want 2, 1", list.Total, len(list.Tasks))
	}
	callOK(t, cs, "task", map[string]any{"action": "list", "query": "retry fetcher", "skill": "go-testing", "mode": "coder"}, &list)
	if list.Total != 1 || list.Tasks[0].ID != id {
		t.Errorf("query = %+v", list.Tasks)
	}

	var upd TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "in_progress", "agent": "coder",
		"set_fields": map[string]string{"Diff": "hard"}}, &upd)
	if upd.Task.Status != "IN_PROGRESS" || upd.Before.Status != "TODO" || upd.Task.Difficulty != "hard" ||
		!slices.Contains(upd.Task.Agents, "@coder") {
		t.Errorf("update = before %+v after %+v", upd.Before, upd.Task)
	}
	if !slices.Contains(upd.Changed, "status") {
		t.Errorf("changed = %v", upd.Changed)
	}
	rows = loadTasks(t, ws)
	if rows[0].Status != "IN_PROGRESS" || rows[0].Difficulty != "hard" {
		t.Errorf("matrix after update = %+v", rows[0])
	}
	callOK(t, cs, "task", map[string]any{"action": "list", "status": "IN_PROGRESS", "agent": "@coder"}, &list)
	if list.Total != 1 {
		t.Errorf("list by status and agent: %d", list.Total)
	}

	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "DONE"}, nil)
	var arch TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "archive", "id": id}, &arch)
	if arch.Dir != ".agent/archive/"+id+"_retry" {
		t.Errorf("archive dir = %q", arch.Dir)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, ".agent", "archive", id+"_retry", "README.md")); err != nil {
		t.Errorf("not archived: %v", err)
	}
	if len(loadTasks(t, ws)) != 2 {
		t.Errorf("archive must keep the row")
	}
}

// Every bad input is a tool error naming the field; nothing on disk changes;
// the server keeps answering.
func TestToolErrors(t *testing.T) {
	ws := newWorkspace(t, 2)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[0].ID
	cases := []struct {
		tool  string
		args  map[string]any
		field string // must appear in the message
		fix   string // a hint of the fix that must appear too
	}{
		{"task", map[string]any{}, "action", "action"},
		{"task", map[string]any{"action": "delete"}, "action", "create, update, claim, list, archive, scaffold"},
		{"task", map[string]any{"action": "update", "id": "zzzzzz", "status": "DONE"}, "id", "list"},
		{"task", map[string]any{"action": "update", "id": id[:5] + "x", "status": "DONE"}, "id", id},
		{"task", map[string]any{"action": "update", "id": id, "status": "PAUSED"}, "status", "IN_PROGRESS"},
		{"task", map[string]any{"action": "update", "id": id, "priority": "P9"}, "priority", "P1"},
		{"task", map[string]any{"action": "update", "id": id}, "status", "set_fields"},
		{"task", map[string]any{"action": "update", "status": "DONE"}, "id", "task ID"},
		{"task", map[string]any{"action": "update", "id": id, "set_fields": map[string]string{"Status": "NOPE"}}, "set_fields", "TODO"},
		{"task", map[string]any{"action": "update", "id": id, "slug": "renamed"}, "slug", "remove it"},
		{"task", map[string]any{"action": "create", "mode": "coder"}, "description", "required"},
		{"task", map[string]any{"action": "create", "description": "x"}, "mode", "coder"},
		{"task", map[string]any{"action": "create", "description": "x", "mode": "coder", "skills": []string{"nope"}}, "skills", "SKILL.md first; pass force: true to do it anyway"},
		{"task", map[string]any{"action": "claim", "id": id}, "agent", "required"},
		{"task", map[string]any{"action": "claim", "id": id, "agent": "two words"}, "agent", "@mention"},
		{"task", map[string]any{"action": "claim", "id": "nosuch", "agent": "@a"}, "id", "list"},
		{"task", map[string]any{"action": "create", "description": "x", "mode": "coder", "slug": "../escape"}, "slug", ""},
		{"task", map[string]any{"action": "create", "description": "x", "mode": "coder", "difficulty": "extreme"}, "difficulty", "hard"},
		{"task", map[string]any{"action": "list", "limit": "ten"}, "limit", "integer"},
		{"task", map[string]any{"action": "list", "limit": -1}, "limit", "0"},
		{"task", map[string]any{"action": "list", "stauts": "TODO"}, "stauts", "status"},
		{"task", map[string]any{"action": "list", "description": "x"}, "description", "remove it"},
		{"task", map[string]any{"action": "archive", "id": id}, "id", "DONE"},
		{"task", map[string]any{"action": "archive"}, "id", "required"},
		{"task", map[string]any{"action": "scaffold"}, "id", "required"},
		{"task", map[string]any{"action": "scaffold", "id": id}, "id", "already has a folder"},
		{"task", map[string]any{"action": "scaffold", "id": "nosuch"}, "id", "list"},
		{"task", map[string]any{"action": "scaffold", "id": id, "slug": "../x"}, "slug", ""},
		{"task", map[string]any{"action": "scaffold", "id": id, "status": "DONE"}, "status", "remove it"},
		{"task_get_context", map[string]any{"id": "nosuch"}, "id", "list"},
		{"task_get_context", map[string]any{}, "id", "required"},
		{"skill", map[string]any{"action": "load"}, "skills", "list"},
		{"skill", map[string]any{"action": "load", "skills": []string{"go-testin"}}, "skills[0]", "go-testing"},
		{"skill", map[string]any{"action": "load", "skills": []string{"../../etc"}}, "skills[0]", ""},
		{"skill", map[string]any{"action": "load", "skills": []string{"go-testing"}, "format": "huge"}, "format", "instructions_only"},
		{"format_prompt", map[string]any{"id": id, "context_files": []string{"../../../etc/passwd"}}, "context_files[0]", "inside the workspace"},
		{"format_prompt", map[string]any{"id": id, "mode": "nosuchmode"}, "mode", "coder"},
		{"format_prompt", map[string]any{"id": "nosuch"}, "id", ""},
		{"select_model", map[string]any{}, "id", "mode and difficulty"},
		{"select_model", map[string]any{"mode": "coder", "difficulty": "impossible"}, "difficulty", "hard"},
		{"select_model", map[string]any{"id": "nosuch"}, "id", ""},
	}
	before := treeHash(t, ws.Root)
	for _, c := range cases {
		res := call(t, cs, c.tool, c.args)
		msg := text(res)
		t.Logf("%s %v → %s", c.tool, c.args, msg)
		if !res.IsError {
			t.Errorf("%s %v: no error; result %s", c.tool, c.args, msg)
			continue
		}
		msg = errMessage(t, res)
		if !strings.HasPrefix(msg, c.field+": ") {
			t.Errorf("%s %v: message does not start with the field %q: %s", c.tool, c.args, c.field, msg)
		}
		if !strings.Contains(msg, c.fix) {
			t.Errorf("%s %v: message lacks the fix %q: %s", c.tool, c.args, c.fix, msg)
		}
		if after := treeHash(t, ws.Root); after != before {
			t.Fatalf("%s %v changed the workspace", c.tool, c.args)
		}
	}
	// Still serving.
	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list"}, &list)
	if list.Total != 2 {
		t.Errorf("after errors: %d tasks", list.Total)
	}
}

func TestContextSkillPromptModelHandoff(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[0].ID
	if err := os.WriteFile(filepath.Join(ws.Root, "notes.txt"), []byte("remember the lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var c struct {
		Task    matrix.Task `json:"task"`
		TaskDir string      `json:"task_dir"`
		Readme  struct {
			Content string `json:"content"`
		} `json:"readme"`
		Skills []struct {
			Slug    string `json:"slug"`
			Summary string `json:"summary"`
		} `json:"skills"`
	}
	res := callOK(t, cs, "task_get_context", map[string]any{"id": id}, &c)
	if c.Task.ID != id || !strings.HasPrefix(c.TaskDir, ".agent/tasks/"+id+"_") || !strings.Contains(c.Readme.Content, id) {
		t.Errorf("context = %+v", c)
	}
	if len(c.Skills) != 1 || c.Skills[0].Slug != "go-testing" || !strings.Contains(c.Skills[0].Summary, "table-driven") {
		t.Errorf("context skills = %+v", c.Skills)
	}
	if !strings.Contains(text(res), id) {
		t.Errorf("context text lacks the ID")
	}

	var sl SkillOutput
	callOK(t, cs, "skill", map[string]any{"action": "list"}, &sl)
	if len(sl.Skills) != 1 || sl.Skills[0].Slug != "go-testing" || sl.Skills[0].Description == "" {
		t.Errorf("skill list = %+v", sl)
	}
	callOK(t, cs, "skill", map[string]any{"action": "load", "skills": []string{"go-testing"}}, &sl)
	if sl.Format != "summary" || !strings.Contains(sl.Skills[0].Content, "Go testing") {
		t.Errorf("skill load summary = %+v", sl)
	}
	callOK(t, cs, "skill", map[string]any{"action": "load", "skills": "go-testing", "format": "instructions_only"}, &sl)
	if strings.Contains(sl.Skills[0].Content, "go test ./...") {
		t.Errorf("instructions_only kept the Examples section: %q", sl.Skills[0].Content)
	}

	var p PromptOutput
	res = callOK(t, cs, "format_prompt", map[string]any{"id": id, "context_files": []string{"notes.txt"}, "task_override": "Only fix the lock."}, &p)
	if !strings.Contains(p.Text, "remember the lock") || !strings.Contains(p.Text, "Only fix the lock.") || p.Bytes != len(p.Text) {
		t.Errorf("prompt lacks the context file or override:\n%s", p.Text)
	}
	if text(res) != p.Text {
		t.Errorf("text content is not the prompt")
	}
	var kinds []string
	for _, part := range p.Parts {
		kinds = append(kinds, part.Kind)
	}
	if !slices.Contains(kinds, "context") || !slices.Contains(kinds, "mode") {
		t.Errorf("parts = %v", kinds)
	}

	var m ModelOutput
	callOK(t, cs, "select_model", map[string]any{"mode": "oracle", "difficulty": "med"}, &m)
	if m.Tier != "deep" || m.Model != "gemini-2.5-pro" || m.Reason == "" {
		t.Errorf("select_model oracle/med = %+v", m)
	}
	callOK(t, cs, "select_model", map[string]any{"id": id}, &m)
	want, err := prompt.ChooseModel(context.Background(), ws, "coder", "med", testGetenv)
	if err != nil {
		t.Fatal(err)
	}
	if m.TaskID != id || m.Mode != "coder" || m.Difficulty != "med" || m.Model != want.Model || m.Reason != want.Reason {
		t.Errorf("select_model id = %+v, want the task's mode and difficulty and %+v", m, want)
	}
	// explorer's front matter names the fast tier: its tier at med; hard still gets deep.
	callOK(t, cs, "select_model", map[string]any{"mode": "explorer", "difficulty": "med"}, &m)
	if m.Tier != "fast" || !strings.Contains(m.Reason, "explorer.md") {
		t.Errorf("select_model explorer/med (front matter model: fast) = %+v", m)
	}
	callOK(t, cs, "select_model", map[string]any{"mode": "explorer", "difficulty": "hard"}, &m)
	if m.Tier != "deep" || !strings.Contains(m.Reason, "difficulty hard") {
		t.Errorf("select_model explorer/hard = %+v", m)
	}

	var h HandoffOutput
	callOK(t, cs, "handoff_generate", map[string]any{}, &h)
	b, err := os.ReadFile(filepath.Join(ws.Root, h.Path))
	if err != nil || !strings.HasPrefix(h.Path, ".agent/handoffs/") {
		t.Fatalf("handoff file %q: %v", h.Path, err)
	}
	if string(b) != h.Report.Text || len(h.Report.NextUp) != 1 {
		t.Errorf("handoff report does not match the file / next up = %+v", h.Report.NextUp)
	}
}

func TestResources(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	ctx := context.Background()
	id := loadTasks(t, ws)[0].ID

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: MatrixURI})
	if err != nil {
		t.Fatal(err)
	}
	disk, _ := os.ReadFile(ws.MatrixPath())
	if res.Contents[0].Text != string(disk) || res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("matrix resource differs from the file")
	}

	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: TaskURIPrefix + id})
	if err != nil {
		t.Fatal(err)
	}
	var tr TaskResource
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Task.ID != id || !strings.Contains(tr.Readme, id) || !strings.HasPrefix(tr.Dir, ".agent/tasks/"+id) {
		t.Errorf("task resource = %+v", tr)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: TaskURIPrefix + "nosuch"}); err == nil {
		t.Errorf("unknown task resource: no error")
	}

	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != TaskURITemplate {
		t.Errorf("templates = %+v, %v", tmpl, err)
	}
}

// The parsed matrix is cached: it is re-read only when the file changed.
func TestMatrixCache(t *testing.T) {
	ws := newWorkspace(t, 3)
	srv, cs := connect(t, ws, nil)
	for range 5 {
		callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
	}
	if n := srv.MatrixLoads(); n != 1 {
		t.Errorf("5 lists parsed the matrix %d times, want 1", n)
	}
	id := loadTasks(t, ws)[0].ID
	if _, err := task.UpdateTask(context.Background(), ws, id, matrix.Update{Status: matrix.Str("BLOCKED")}, fixedNow, task.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list", "status": "BLOCKED"}, &list)
	if list.Total != 1 || list.Tasks[0].ID != id {
		t.Errorf("external change not seen: %+v", list)
	}
	if n := srv.MatrixLoads(); n != 2 {
		t.Errorf("after one external change: %d parses, want 2", n)
	}
}

// scaffold creates the folder of a row someone added by hand.
func TestTaskScaffoldAction(t *testing.T) {
	ws := newWorkspace(t, 1)
	b, err := os.ReadFile(ws.MatrixPath())
	if err != nil {
		t.Fatal(err)
	}
	row := "| a1b2c3 | IN_PROGRESS | P1 | hard | coder | | @me | Row added by hand<br>with a second line | 2026-01-10 | 2026-01-11 |\n"
	if err := os.WriteFile(ws.MatrixPath(), append(b, row...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	var out TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "scaffold", "id": "a1b2c3"}, &out)
	if out.Dir != ".agent/tasks/a1b2c3_row_added_by_hand" {
		t.Errorf("dir = %q", out.Dir)
	}
	if out.Task == nil || out.Task.Status != "IN_PROGRESS" {
		t.Errorf("task = %+v", out.Task)
	}
	readme, err := os.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(out.Dir), "README.md"))
	if err != nil || !strings.Contains(string(readme), "a1b2c3") {
		t.Errorf("README: %v\n%s", err, readme)
	}
	after, _ := os.ReadFile(ws.MatrixPath())
	if string(after) != string(b)+row {
		t.Errorf("scaffold changed the matrix")
	}
}
