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
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/taskcontext"
	"github.com/agentinfra/agentinfra/workspace"
)

func ptr[T any](v T) *T { return &v }

// readOnly are the annotations of tools that change nothing.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// ---- task_get_context ----

// ContextInput is the input of task_get_context.
type ContextInput struct {
	ID string `json:"id"`
}

func (s *Server) addContextTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "task_get_context",
			Description: "Everything to read before working on a task (id): row, folder, README, latest tracking notes, " +
				"artifacts, README links (missing ones flagged), skill summaries, mode file.",
			Annotations: readOnly("Get task context"),
		},
		Props: map[string]prop{
			"id": {},
		},
		Required: []string{"id"},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in ContextInput, _ map[string]json.RawMessage) (taskcontext.Context, string, error) {
		d, err := s.doc(ctx)
		if err != nil {
			return taskcontext.Context{}, "", err
		}
		c, err := taskcontext.Build(ctx, s.ws, strings.TrimSpace(in.ID), taskcontext.Options{Doc: d, Getenv: s.opts.Getenv})
		if err != nil {
			return taskcontext.Context{}, "", idError(err)
		}
		return c, taskcontext.Render(c), nil
	})
}

// idError leaves unknown-ID errors typed: errorResult names the id field.
func idError(err error) error { return err }

// ---- skill ----

// SkillInput is the input of skill.
type SkillInput struct {
	Action string     `json:"action"`
	Skills StringList `json:"skills,omitempty"`
	Format string     `json:"format,omitempty"`
}

// SkillOutput is the result of skill.
type SkillOutput struct {
	Action string `json:"action"`
	// Format is the rendering of load ("" for list).
	Format   string         `json:"format"`
	Skills   []SkillItem    `json:"skills"`
	Problems []SkillProblem `json:"problems"`
}

// SkillItem is one skill: listed, or loaded with its rendered content.
type SkillItem struct {
	Slug        string   `json:"slug"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Source      string   `json:"source"`
	Path        string   `json:"path"`
	Resources   []string `json:"resources"`
	// Content is the skill rendered in Format (load only).
	Content string `json:"content"`
}

// SkillProblem is a skill that could not be loaded while listing.
type SkillProblem struct {
	Slug    string `json:"slug"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (s *Server) addSkillTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "skill",
			Description: "List the skills, or load some for a prompt. load (skills, format: default summary): full is " +
				"SKILL.md with its resource files, summary about 1,500 characters, instructions_only the body " +
				"without examples.",
			Annotations: readOnly("Skills"),
		},
		Props: map[string]prop{
			"action": {Enum: []string{"list", "load"}},
			"skills": {Desc: `Skill slugs, e.g. ["go-testing"].`},
			"format": {Enum: skills.Formats},
		},
		Required: []string{"action"},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in SkillInput, raw map[string]json.RawMessage) (SkillOutput, string, error) {
		action, err := enumValue("action", in.Action, []string{"list", "load"})
		if err != nil {
			return SkillOutput{}, "", err
		}
		lib := skills.NewLibrary(s.ws, s.opts.Getenv)
		out := SkillOutput{Action: action, Skills: []SkillItem{}, Problems: []SkillProblem{}}
		var text strings.Builder
		switch action {
		case "list":
			if given(raw, "skills") || given(raw, "format") {
				return out, "", fieldErrorf(firstGiven(raw, "skills", "format"), "only used with action load; remove it or use action load")
			}
			list, probs, err := lib.List(ctx)
			if err != nil {
				return out, "", err
			}
			for _, sk := range list {
				out.Skills = append(out.Skills, skillItem(sk))
				fmt.Fprintf(&text, "%s — %s\n", sk.Slug, sk.Description)
			}
			for _, p := range probs {
				out.Problems = append(out.Problems, SkillProblem{Slug: p.Slug, Path: s.ws.RelPath(p.Path), Line: p.Line, Message: p.Error()})
				fmt.Fprintf(&text, "problem: %s\n", p.Error())
			}
			if len(list) == 0 {
				text.WriteString("no skills: add .agent/skills/{slug}/SKILL.md\n")
			}
		case "load":
			if len(in.Skills) == 0 {
				return out, "", fieldErrorf("skills", "required for action load; pass the slugs, e.g. [\"go-testing\"] (action list shows them)")
			}
			f := in.Format
			if f == "" {
				f = skills.FormatSummary
			}
			f, err := enumValue("format", f, skills.Formats)
			if err != nil {
				return out, "", err
			}
			out.Format = f
			for i, slug := range in.Skills {
				sk, err := lib.Load(ctx, slug)
				if err != nil {
					return SkillOutput{}, "", asField(fmt.Sprintf("skills[%d]", i), err)
				}
				content, err := skills.Render(sk, f)
				if err != nil {
					return SkillOutput{}, "", err
				}
				it := skillItem(sk)
				it.Content = content
				out.Skills = append(out.Skills, it)
				if i > 0 {
					text.WriteString("\n")
				}
				text.WriteString(content)
			}
		}
		return out, text.String(), nil
	})
}

func skillItem(sk skills.Skill) SkillItem {
	res := sk.Resources
	if res == nil {
		res = []string{}
	}
	return SkillItem{Slug: sk.Slug, Name: sk.Name, Description: sk.Description, Source: sk.Source,
		Path: sk.DisplayDir + "/SKILL.md", Resources: res}
}

func firstGiven(raw map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if given(raw, k) {
			return k
		}
	}
	return keys[0]
}

// ---- format_prompt ----

// PromptInput is the input of format_prompt.
type PromptInput struct {
	ID           string     `json:"id"`
	Mode         string     `json:"mode,omitempty"`
	TaskOverride string     `json:"task_override,omitempty"`
	ContextFiles StringList `json:"context_files,omitempty"`
}

// PromptOutput is the result of format_prompt.
type PromptOutput struct {
	TaskID        string        `json:"task_id"`
	Mode          string        `json:"mode"`
	Bytes         int           `json:"bytes"`
	Parts         []prompt.Part `json:"parts"`
	Skills        []string      `json:"skills"`
	MissingSkills []string      `json:"missing_skills"`
	// Warnings say what the prompt lacks, e.g. the task's mode has no file.
	Warnings []string `json:"warnings,omitempty"`
	Text     string   `json:"text"`
}

func (s *Server) addPromptTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "format_prompt",
			Description: "Assemble the prompt dispatch_task sends for a task (id): mode system prompt, skill summaries, " +
				"the task README (or task_override), context files, reporting protocol; parts gives each section's size.",
			Annotations: readOnly("Format prompt"),
		},
		Props: map[string]prop{
			"id":            {},
			"mode":          {Desc: "Instead of the task's mode."},
			"task_override": {Desc: "Text that replaces the task README."},
			"context_files": {Desc: "Workspace-relative files to include."},
		},
		Required: []string{"id"},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in PromptInput, _ map[string]json.RawMessage) (PromptOutput, string, error) {
		t, doc, err := s.task(ctx, in.ID)
		if err != nil {
			return PromptOutput{}, "", err
		}
		for i, p := range in.ContextFiles {
			if _, err := s.ws.Resolve(p); err != nil {
				return PromptOutput{}, "", fieldErrorf(fmt.Sprintf("context_files[%d]", i), "%v", insideHint(err))
			}
		}
		p, err := prompt.Assemble(ctx, s.ws, prompt.Input{
			Task: t, Doc: doc, Mode: strings.TrimSpace(in.Mode), TaskOverride: in.TaskOverride,
			ContextFiles: in.ContextFiles, Getenv: s.opts.Getenv,
		})
		if err != nil {
			if errors.Is(err, skills.ErrNotFound) && in.Mode != "" && !slices.Contains(skills.ModeNames(s.ws), strings.TrimSpace(in.Mode)) {
				return PromptOutput{}, "", asField("mode", err)
			}
			return PromptOutput{}, "", err
		}
		out := PromptOutput{TaskID: t.ID, Mode: p.Mode, Bytes: len(p.Text), Parts: nonNil(p.Parts),
			Skills: nonNil(p.Skills), MissingSkills: nonNil(p.MissingSkills), Warnings: p.Warnings, Text: p.Text}
		return out, p.Text, nil
	})
}

// insideHint makes sure a refused path error says what to do.
func insideHint(err error) string {
	msg := err.Error()
	if !errors.Is(err, workspace.ErrOutside) {
		msg += "; pass a path inside the workspace"
	}
	return msg
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// task returns the row of id from the cached matrix, or an error naming the id field.
func (s *Server) task(ctx context.Context, id string) (matrix.Task, *matrix.Doc, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return matrix.Task{}, nil, fieldErrorf("id", "required; pass a task ID (task with action list shows them)")
	}
	d, err := s.doc(ctx)
	if err != nil {
		return matrix.Task{}, nil, err
	}
	t, err := d.Lookup(id)
	if err != nil {
		return matrix.Task{}, nil, err // a NotFound agenterr.Error: errorResult names the id field
	}
	return t, d, nil
}
