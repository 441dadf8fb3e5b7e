package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/scaffold"
)

// Task actions.
var taskActions = []string{"create", "update", "list", "archive", "scaffold"}

// DefaultListLimit is the list action's default limit.
const DefaultListLimit = 10

// TaskInput is the input of the task tool. Which fields apply depends on action.
type TaskInput struct {
	Action string `json:"action"`
	// create
	Description string     `json:"description,omitempty"`
	Mode        string     `json:"mode,omitempty"`
	Priority    string     `json:"priority,omitempty"`
	Difficulty  string     `json:"difficulty,omitempty"`
	Skills      StringList `json:"skills,omitempty"`
	Slug        string     `json:"slug,omitempty"`
	// update, archive, scaffold
	ID        string            `json:"id,omitempty"`
	Status    string            `json:"status,omitempty"`
	Agent     string            `json:"agent,omitempty"`
	SetFields map[string]string `json:"set_fields,omitempty"`
	// list
	Skill string `json:"skill,omitempty"`
	Query string `json:"query,omitempty"`
	Limit int    `json:"limit,omitempty"`
	Ready bool   `json:"ready,omitempty"`
}

// taskFields are the fields each action accepts (besides action).
var taskFields = map[string][]string{
	"create":   {"description", "mode", "priority", "difficulty", "skills", "slug"},
	"update":   {"id", "status", "agent", "priority", "set_fields"},
	"list":     {"status", "priority", "mode", "agent", "skill", "query", "limit", "ready"},
	"archive":  {"id"},
	"scaffold": {"id", "slug"},
}

// TaskOutput is the result of the task tool.
type TaskOutput struct {
	Action string `json:"action"`
	// Task is the row created, updated (after the change) or archived.
	Task *matrix.Task `json:"task,omitempty"`
	// Before is the row before an update.
	Before *matrix.Task `json:"before,omitempty"`
	// Changed names the fields an update changed (Updated not counted).
	Changed []string `json:"changed"`
	// Dir is the task folder (workspace-relative): created, scaffolded, or where archive moved it.
	Dir string `json:"dir,omitempty"`
	// Tasks are the rows a list matched, at most limit; [] for other actions.
	Tasks []matrix.Task `json:"tasks"`
	// Total is how many rows a list matched before the limit.
	Total int `json:"total"`
	// Warnings are the matrix rows a list could not read ("line 40: ..."):
	// rows with a wrong number of cells, rows that never end, `|`-led lines
	// that belong to no table. Absent when every row was read.
	Warnings []string `json:"warnings,omitempty"`
}

func (s *Server) addTaskTool() error {
	statusDesc := "update: the new status; list: only tasks with this status."
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "task",
			Description: "Tasks of the development matrix (.agent/DEVELOPMENT_MATRIX.md). " +
				"action list {status?, priority?, mode?, agent?, skill?, query?, ready?, limit=10}: matching rows, file order; warnings names rows of the matrix that could not be read. " +
				"action create {description, mode, priority=P2, difficulty=med, skills[], slug?}: adds a TODO row and its folder .agent/tasks/{id}_{slug}/. " +
				"action update {id, status?, agent?, priority?, set_fields{}}: changes only what is given and sets Updated. " +
				"action archive {id}: moves a DONE task's folder to .agent/archive/ (the row stays). " +
				"action scaffold {id, slug?}: creates the missing folder of an existing row (the row stays). " +
				"Writes take the same lock as the agentinfra CLI.",
			Annotations: &mcp.ToolAnnotations{Title: "Tasks", ReadOnlyHint: false, DestructiveHint: ptr(false),
				IdempotentHint: false, OpenWorldHint: ptr(false)},
		},
		Props: map[string]prop{
			"action":      {Desc: "What to do: list, create, update, archive or scaffold.", Enum: taskActions},
			"description": {Desc: "create: what the task is about (one line; becomes the Description column)."},
			"mode":        {Desc: "create: the agent mode (a file .agent/agents/{mode}.md), e.g. coder; list: only tasks of this mode."},
			"priority":    {Desc: "create: priority (default P2); update: the new priority; list: only tasks with this priority (no default).", Enum: s.store.Vocab.Priorities(), Default: "P2"},
			"difficulty":  {Desc: "create: difficulty (default med).", Enum: s.store.Vocab.Difficulties(), Default: "med"},
			"skills":      {Desc: "create: skill slugs (folders under .agent/skills/), e.g. [\"go-testing\"]."},
			"slug":        {Desc: "create, scaffold: folder name suffix {id}_{slug}; default: a snake_case form of the description. No '/', '..' or leading dot."},
			"id":          {Desc: "update, archive, scaffold: the task ID (the ID column)."},
			"status":      {Desc: statusDesc, Enum: s.store.Vocab.Statuses()},
			"agent":       {Desc: "update: add this @mention to Agents (once); list: only tasks mentioning it. E.g. @coder."},
			"set_fields":  {Desc: "update: other columns to set, by header name, e.g. {\"Diff\": \"hard\", \"Mode\": \"reviewer\", \"Description\": \"...\"}."},
			"skill":       {Desc: "list: only tasks that name this skill."},
			"query":       {Desc: "list: words that must all appear in the ID, description, mode, skills, agents or extra columns."},
			"ready":       {Desc: "list: only TODO tasks whose Deps are all DONE."},
			"limit":       {Desc: "list: at most this many rows (default 10; 0 means no limit).", Default: DefaultListLimit},
		},
		Required: []string{"action"},
	}, s.taskTool)
}

func (s *Server) taskTool(ctx context.Context, _ *mcp.CallToolRequest, in TaskInput, raw map[string]json.RawMessage) (TaskOutput, string, error) {
	action, err := enumValue("action", in.Action, taskActions)
	if err != nil {
		return TaskOutput{}, "", err
	}
	for k := range raw {
		if k != "action" && !slices.Contains(taskFields[action], k) {
			return TaskOutput{}, "", fieldErrorf(k, "not used by action %s (its fields: %s); remove it%s",
				action, strings.Join(taskFields[action], ", "), fieldHint(action, k))
		}
	}
	out := TaskOutput{Action: action, Changed: []string{}, Tasks: []matrix.Task{}}
	switch action {
	case "list":
		return s.taskList(ctx, in, raw, out)
	case "create":
		return s.taskCreate(ctx, in, out)
	case "update":
		return s.taskUpdate(ctx, in, out)
	case "scaffold":
		return s.taskScaffold(ctx, in, out)
	default:
		return s.taskArchive(ctx, in, out)
	}
}

func fieldHint(action, k string) string {
	if action == "update" {
		switch k {
		case "mode", "difficulty", "description", "skills":
			col := map[string]string{"mode": "Mode", "difficulty": "Diff", "description": "Description", "skills": "Skills"}[k]
			return fmt.Sprintf(", or set it with set_fields {%q: ...}", col)
		}
	}
	return ""
}

func (s *Server) taskList(ctx context.Context, in TaskInput, raw map[string]json.RawMessage, out TaskOutput) (TaskOutput, string, error) {
	q := matrix.Query{Mode: in.Mode, Agent: in.Agent, Skill: in.Skill, Text: in.Query, Ready: in.Ready}
	if in.Status != "" {
		q.Status = []string{in.Status}
	}
	if in.Priority != "" {
		q.Priority = []string{in.Priority}
	}
	limit := DefaultListLimit
	if given(raw, "limit") {
		limit = in.Limit
	}
	if limit < 0 {
		return out, "", fieldErrorf("limit", "%d is negative; pass 0 (no limit) or more", limit)
	}
	q, err := q.NormalizeWith(s.store.Vocab)
	if err != nil {
		return out, "", fieldErrorf(queryField(err), "%v", err)
	}
	d, tasks, err := s.cache.get(ctx)
	if err != nil {
		return out, "", err
	}
	if len(tasks) == 0 {
		if err := d.RequireTaskTable(); err != nil {
			return out, "", noTaskTable(err) // not an empty list
		}
	}
	for _, p := range d.ReadProblems() {
		out.Warnings = append(out.Warnings, fmt.Sprintf("line %d: %s", p.Line, p.Message))
	}
	all := q.Apply(tasks)
	out.Total = len(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out.Tasks = all
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d matching tasks\n", len(all), out.Total)
	for _, t := range all {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Priority, t.Difficulty, t.Mode, t.Description)
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return out, b.String(), nil
}

// queryField guesses which list field a Query.Normalize error is about.
func queryField(err error) string {
	msg := strings.ToLower(err.Error())
	for _, f := range []string{"status", "priority", "agent", "mention"} {
		if strings.Contains(msg, f) {
			if f == "mention" {
				return "agent"
			}
			return f
		}
	}
	return "arguments"
}

func (s *Server) taskCreate(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	if strings.TrimSpace(in.Description) == "" {
		return out, "", fieldErrorf("description", "required for action create; say what the task is about")
	}
	if strings.TrimSpace(in.Mode) == "" {
		return out, "", fieldErrorf("mode", "required for action create; name an agent mode from .agent/agents/, e.g. coder")
	}
	o := scaffold.CreateOptions{Description: in.Description, Mode: strings.TrimSpace(in.Mode),
		Skills: in.Skills, Slug: in.Slug, Getenv: s.opts.Getenv}
	var err error
	if in.Priority != "" {
		if o.Priority, err = s.store.Vocab.Priority(in.Priority); err != nil {
			return out, "", fieldErrorf("priority", "%v", err)
		}
	}
	if in.Difficulty != "" {
		if o.Difficulty, err = s.store.Vocab.Difficulty(in.Difficulty); err != nil {
			return out, "", fieldErrorf("difficulty", "%v", err)
		}
	}
	if o.Slug != "" {
		if err := scaffold.ValidateSlug(o.Slug); err != nil {
			return out, "", fieldErrorf("slug", "%v", err)
		}
	}
	if err := scaffold.CheckRefs(s.ws, s.opts.Getenv, o.Mode, nil); err != nil {
		return out, "", fieldErrorf("mode", "%v", err)
	}
	if err := scaffold.CheckRefs(s.ws, s.opts.Getenv, "", o.Skills); err != nil {
		return out, "", fieldErrorf("skills", "%v", err)
	}
	t, dir, err := scaffold.CreateTask(ctx, s.ws, o, s.opts.Now())
	if err != nil {
		return out, "", noTaskTable(err)
	}
	out.Task, out.Dir = &t, s.rel(dir)
	return out, fmt.Sprintf("created task %s (%s) in %s\n", t.ID, t.Description, out.Dir), nil
}

func (s *Server) taskUpdate(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action update; pass the task ID (action list shows them)")
	}
	var u matrix.Update
	if in.Status != "" {
		v, err := s.store.Vocab.Status(in.Status)
		if err != nil {
			return out, "", fieldErrorf("status", "%v", err)
		}
		u.Status = &v
	}
	if in.Priority != "" {
		v, err := s.store.Vocab.Priority(in.Priority)
		if err != nil {
			return out, "", fieldErrorf("priority", "%v", err)
		}
		u.Priority = &v
	}
	if a := strings.TrimSpace(in.Agent); a != "" {
		m, err := matrix.NormalizeMention(a)
		if err != nil {
			return out, "", fieldErrorf("agent", "%v", err)
		}
		u.AddAgents = []string{m}
	}
	if len(in.SetFields) > 0 {
		u.Set = in.SetFields
	}
	if u.Status == nil && u.Priority == nil && u.AddAgents == nil && u.Set == nil {
		return out, "", fieldErrorf("status", "action update needs something to change: status, agent, priority or set_fields")
	}
	r, err := scaffold.UpdateTask(ctx, s.ws, id, u, s.opts.Now(), scaffold.UpdateOptions{Getenv: s.opts.Getenv})
	if err != nil {
		if errors.Is(err, matrix.ErrNotFound) {
			return out, "", idError(err)
		}
		if len(u.Set) > 0 && errors.Is(err, matrix.ErrInvalid) {
			return out, "", fieldErrorf("set_fields", "%v", err)
		}
		return out, "", err
	}
	out.Task, out.Before, out.Changed = &r.After, &r.Before, nonNil(r.Changed)
	text := fmt.Sprintf("updated task %s: %s\n", r.After.ID, strings.Join(r.Changed, ", "))
	if len(r.Changed) == 0 {
		text = fmt.Sprintf("task %s unchanged (Updated set)\n", r.After.ID)
	}
	return out, text, nil
}

func (s *Server) taskArchive(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action archive; pass the ID of a DONE task")
	}
	moved, err := scaffold.Archive(ctx, s.ws, id)
	if err != nil {
		if errors.Is(err, matrix.ErrNotFound) || errors.Is(err, scaffold.ErrNotDone) ||
			errors.Is(err, scaffold.ErrNoTaskDir) || errors.Is(err, scaffold.ErrAlreadyArchived) {
			return out, "", &fieldError{Field: "id", Msg: err.Error()}
		}
		return out, "", err
	}
	d, err := s.doc(ctx)
	if err != nil {
		return out, "", err
	}
	if t, ok := d.Task(id); ok {
		out.Task = &t
	}
	var b strings.Builder
	for i, m := range moved {
		if i == 0 {
			out.Dir = s.rel(m.To)
		}
		fmt.Fprintf(&b, "archived task %s: %s → %s\n", m.ID, s.rel(m.From), s.rel(m.To))
	}
	return out, b.String(), nil
}

func (s *Server) taskScaffold(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action scaffold; pass the ID of a row that has no folder yet")
	}
	if in.Slug != "" {
		if err := scaffold.ValidateSlug(in.Slug); err != nil {
			return out, "", fieldErrorf("slug", "%v", err)
		}
	}
	t, dir, err := scaffold.ScaffoldTask(ctx, s.ws, id, scaffold.ScaffoldOptions{Slug: in.Slug}, s.opts.Now())
	if err != nil {
		if errors.Is(err, matrix.ErrNotFound) || errors.Is(err, scaffold.ErrExists) || errors.Is(err, matrix.ErrInvalid) {
			return out, "", &fieldError{Field: "id", Msg: err.Error()}
		}
		return out, "", err
	}
	out.Task, out.Dir = &t, s.rel(dir)
	return out, fmt.Sprintf("scaffolded task %s in %s\n", t.ID, out.Dir), nil
}
