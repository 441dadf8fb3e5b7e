package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Task actions.
var taskActions = []string{"create", "update", "claim", "list", "archive", "scaffold", "show", "validate"}

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
	// create, update: accept skills that do not exist (yet)
	Force bool `json:"force,omitempty"`
	// update, claim, archive, scaffold
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
	"create":   {"description", "mode", "priority", "difficulty", "skills", "slug", "force"},
	"update":   {"id", "status", "agent", "priority", "difficulty", "mode", "skills", "description", "set_fields", "force"},
	"claim":    {"id", "agent"},
	"list":     {"status", "priority", "mode", "agent", "skill", "query", "limit", "ready"},
	"archive":  {"id"},
	"scaffold": {"id", "slug"},
	"show":     {"id"},
	"validate": {},
}

// TaskOutput is the result of the task tool.
type TaskOutput struct {
	Action string `json:"action"`
	// Task is the row created, updated or claimed (after the change) or archived.
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
	// Skipped is how many rows of the matrix a list could not read (each
	// named in Warnings): they are in no list. Absent when none.
	Skipped int `json:"skipped,omitempty"`
	// Warnings did not stop the action: for list, the matrix rows it could
	// not read ("line 40: ...": a wrong number of cells, a row that never
	// ends, `|`-led lines that belong to no table); for create and update, a
	// mode with no .agent/agents/{mode}.md. Absent when there are none.
	Warnings []string `json:"warnings,omitempty"`
	// Holder is who holds the task, for claim and show: the last @mention of
	// Agents, or on a matrix without an Agents column the one the task
	// README's status log names. Absent when none.
	Holder string `json:"holder,omitempty"`
	// Archived and Readme are show's: the folder is in .agent/archive/; its README.md.
	Archived bool   `json:"archived,omitempty"`
	Readme   string `json:"readme,omitempty"`
	// Validation is validate's result.
	Validation *Validation `json:"validation,omitempty"`
}

func (s *Server) addTaskTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "task",
			Description: "List, show, create, update, claim, archive and validate tasks (.agent/DEVELOPMENT_MATRIX.md). " +
				"Actions (fields): list (status, priority, mode, agent, skill, query, ready: TODO with Deps all DONE, by priority, " +
				"limit: default 10, 0 = all): rows, total, warnings for unreadable rows; show (id): row, folder, README; " +
				"create (description, mode, priority: default P2, difficulty: default med, skills, slug, force): a TODO " +
				"row and its folder; update (id, status, agent, priority, difficulty, mode, skills, description, set_fields, force): changes only what is given; " +
				"claim (id, agent): TODO → IN_PROGRESS held by agent, refused naming the holder if another agent has it; " +
				"archive (id): moves a DONE task's folder to .agent/archive/; scaffold (id, slug): makes a row's missing " +
				"folder; validate: the matrix's problems by line.",
			Annotations: &mcp.ToolAnnotations{Title: "Tasks", ReadOnlyHint: false, DestructiveHint: ptr(false),
				IdempotentHint: false, OpenWorldHint: ptr(false)},
		},
		Props: map[string]prop{
			"action":      {Enum: taskActions},
			"description": {Desc: "Line breaks and code blocks are kept."},
			"mode":        {Desc: "Agent mode (.agent/agents/{mode}.md), e.g. coder."},
			"priority":    {Enum: s.store.Vocab.Priorities()},
			"difficulty":  {Enum: s.store.Vocab.Difficulties()},
			"skills":      {Desc: "Skill slugs (.agent/skills/{slug}/)."},
			"slug":        {Desc: "Folder suffix; default: from the description."},
			"id":          {},
			"force":       {Desc: "Accept a mode or skills with no file that no row uses yet."},
			"status":      {Enum: s.store.Vocab.Statuses()},
			"agent":       {Desc: "An @mention, e.g. @coder; update adds it to Agents, claim makes it the holder."},
			"set_fields":  {Desc: `Other columns by header, e.g. {"Diff":"hard"}.`},
			"skill":       {},
			"query":       {Desc: "Words that must all appear in the row."},
			"ready":       {},
			"limit":       {},
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
		return s.taskUpdate(ctx, in, raw, out)
	case "claim":
		return s.taskClaim(ctx, in, out)
	case "scaffold":
		return s.taskScaffold(ctx, in, out)
	case "show":
		return s.taskShow(ctx, in, out)
	case "validate":
		return s.taskValidate(ctx, out)
	default:
		return s.taskArchive(ctx, in, out)
	}
}

func fieldHint(action, k string) string {
	if action == "claim" && k == "status" {
		return "; a claim sets IN_PROGRESS itself"
	}
	return ""
}

func (s *Server) taskList(ctx context.Context, in TaskInput, raw map[string]json.RawMessage, out TaskOutput) (TaskOutput, string, error) {
	q := matrix.Query{Mode: in.Mode, Agent: in.Agent, Skill: in.Skill, Text: in.Query, Ready: in.Ready}
	if in.Ready {
		q.Sort = "priority" // the ready queue, as agent start --next takes it: no priority last
	}
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
		return out, "", err // typed: errorResult names the field
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
		if p.Severity == matrix.SeverityError {
			out.Skipped++
		}
	}
	all := q.ApplyWith(tasks, s.store.Vocab)
	for _, p := range matrix.DuplicateIDs(all) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("line %d: %s", p.Line, p.Message))
	}
	out.Total = len(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out.Tasks = all
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d matching tasks", len(all), out.Total)
	if out.Skipped > 0 {
		fmt.Fprintf(&b, "; %d rows of the matrix could not be read and are in no list (see the warnings)", out.Skipped)
	}
	b.WriteString("\n")
	for _, t := range all {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Priority, t.Difficulty, t.Mode, t.Description)
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return out, b.String(), nil
}

func (s *Server) taskCreate(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	if strings.TrimSpace(in.Description) == "" {
		return out, "", fieldErrorf("description", "required for action create; say what the task is about")
	}
	if strings.TrimSpace(in.Mode) == "" {
		return out, "", fieldErrorf("mode", "required for action create; name an agent mode from .agent/agents/, e.g. coder")
	}
	c, err := task.CreateTask(ctx, s.ws, task.CreateOptions{Description: in.Description, Mode: in.Mode,
		Priority: in.Priority, Difficulty: in.Difficulty, Skills: in.Skills, Slug: in.Slug,
		Force: in.Force, Getenv: s.opts.Getenv}, s.opts.Now())
	if err != nil {
		return out, "", noTaskTable(err)
	}
	out.Task, out.Dir, out.Warnings = &c.Task, s.rel(c.Dir), c.Warnings
	return out, fmt.Sprintf("created task %s (%s) in %s\n", c.Task.ID, c.Task.Description, out.Dir) + warningLines(c.Warnings), nil
}

func (s *Server) taskUpdate(ctx context.Context, in TaskInput, raw map[string]json.RawMessage, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action update; pass the task ID (action list shows them)")
	}
	var u matrix.Update
	if in.Status != "" {
		u.Status = &in.Status
	}
	if in.Priority != "" {
		u.Priority = &in.Priority
	}
	if in.Difficulty != "" {
		u.Difficulty = &in.Difficulty
	}
	if in.Mode != "" {
		u.Mode = &in.Mode
	}
	if given(raw, "skills") {
		skills := []string(in.Skills)
		u.Skills = &skills
	}
	if strings.TrimSpace(in.Description) != "" {
		u.Description = &in.Description
	} else if given(raw, "description") {
		return out, "", fieldErrorf("description", "is empty; a task needs a description")
	}
	if a := strings.TrimSpace(in.Agent); a != "" {
		u.AddAgents = []string{a}
	}
	if len(in.SetFields) > 0 {
		u.Set = in.SetFields
	}
	if u.Status == nil && u.Priority == nil && u.Difficulty == nil && u.Mode == nil && u.Skills == nil && u.Description == nil && u.AddAgents == nil && u.Set == nil {
		return out, "", fieldErrorf("status", "action update needs something to change: status, agent, priority, difficulty, mode, skills, description or set_fields")
	}
	r, err := task.UpdateTask(ctx, s.ws, id, u, s.opts.Now(), task.UpdateOptions{Force: in.Force, Getenv: s.opts.Getenv})
	if err != nil {
		return out, "", viaSetFields(err, in.SetFields)
	}
	out.Task, out.Before, out.Changed, out.Warnings = &r.After, &r.Before, nonNil(r.Changed), r.Warnings
	text := fmt.Sprintf("updated task %s: %s\n", r.After.ID, strings.Join(r.Changed, ", "))
	if len(r.Changed) == 0 {
		text = fmt.Sprintf("task %s unchanged (Updated set)\n", r.After.ID)
	}
	return out, text + warningLines(r.Warnings), nil
}

func (s *Server) taskClaim(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action claim; pass the ID of a TODO task")
	}
	if strings.TrimSpace(in.Agent) == "" {
		return out, "", fieldErrorf("agent", "required for action claim; pass your @mention, e.g. @coder")
	}
	r, err := task.Claim(ctx, s.ws, id, in.Agent, s.opts.Now())
	if err != nil {
		return out, "", err
	}
	out.Task, out.Before, out.Changed, out.Holder = &r.After, &r.Before, nonNil(r.Changed), r.Holder
	holder := r.Holder
	if len(r.Changed) == 0 {
		return out, fmt.Sprintf("task %s is already IN_PROGRESS, held by %s\n", id, holder), nil
	}
	return out, fmt.Sprintf("claimed task %s for %s: status %s → %s\n", id, holder, r.Before.Status, r.After.Status), nil
}

// viaSetFields names set_fields on an error about a column the client set
// there rather than with its own parameter.
func viaSetFields(err error, set map[string]string) error {
	inv := agenterr.As(err)
	if inv == nil || inv.Kind != agenterr.Invalid {
		return err
	}
	field := inv.Field
	if field == "agent" {
		field = "agents"
	}
	for k := range set {
		if c := matrix.CanonicalColumn(k); c != "" && c == matrix.CanonicalColumn(field) {
			return &setFieldsError{key: k, err: inv}
		}
	}
	return err
}

func warningLines(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("warning: " + w + "\n")
	}
	return b.String()
}

func (s *Server) taskArchive(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action archive; pass the ID of a DONE task")
	}
	moved, err := task.Archive(ctx, s.ws, id)
	if err != nil {
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
	t, dir, err := task.ScaffoldTask(ctx, s.ws, id, task.ScaffoldOptions{Slug: in.Slug}, s.opts.Now())
	if err != nil {
		return out, "", err
	}
	out.Task, out.Dir = &t, s.rel(dir)
	return out, fmt.Sprintf("scaffolded task %s in %s\n", t.ID, out.Dir), nil
}
