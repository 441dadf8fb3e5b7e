package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

type promptJSON struct {
	TaskID        string        `json:"task_id"`
	Mode          string        `json:"mode"`
	SkillFormat   string        `json:"skill_format"`
	Bytes         int           `json:"bytes"`
	Parts         []prompt.Part `json:"parts"`
	Skills        []string      `json:"skills"`
	MissingSkills []string      `json:"missing_skills"`
	Warnings      []string      `json:"warnings,omitempty"`
	Text          string        `json:"text"`
}

// PromptOptions is what `prompt` runs with.
type PromptOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string
	// Cwd is what relative --context-file paths are relative to.
	Cwd string

	ID string
	// Mode replaces the task's mode when set.
	Mode string
	// TaskOverride replaces the README; "-" is read from stdin.
	TaskOverride      string
	ContextFiles      []string
	SkillFormat       string
	SkipMissingSkills bool
	JSON              bool
}

func NewCmdPrompt(f *Factory, runF func(context.Context, *PromptOptions) error) *cobra.Command {
	o := &PromptOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv, Cwd: f.Cwd}
	cmd := &cobra.Command{
		Use:   "prompt ID",
		Short: "Print the standard prompt for a task: mode, skills, task, context files, reporting protocol",
		Long: `Print the prompt an agent gets for a task, in this order:

  1. the mode's system prompt (.agent/agents/{mode}.md; the task's mode unless --mode)
  2. the skills: the task's, then the mode's front-matter skills, each once
     (--skill-format summary by default; full or instructions_only)
  3. the task: its matrix row as fields, then its README.md (or --task-override)
  4. each --context-file, fenced under its path (files must be inside the workspace)
  5. the reporting protocol: tracking/ notes, artifacts/, agentinfra task update

The same inputs always give the same bytes. --json adds the size of each part.
A skill that cannot be loaded is an error unless --skip-missing-skills, which
leaves a note in its place.`,
		Example: `  agentinfra prompt 3f9a1c
  agentinfra prompt 3f9a1c --mode reviewer --context-file internal/fetch.go --json
  echo "Only write the design note" | agentinfra prompt 3f9a1c --task-override -`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			fm, err := skills.ValidFormat(o.SkillFormat)
			if err != nil {
				return UsageErrorf("--skill-format: %v", err)
			}
			o.SkillFormat = fm
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return promptRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Mode, "mode", "", "agent mode to use instead of the task's")
	cmd.Flags().StringVar(&o.TaskOverride, "task-override", "", "instructions that replace the task README ('-' reads stdin)")
	cmd.Flags().StringArrayVar(&o.ContextFiles, "context-file", nil, "file to include, fenced under its path (repeatable)")
	cmd.Flags().StringVar(&o.SkillFormat, "skill-format", skills.FormatSummary, "full, summary or instructions_only")
	cmd.Flags().BoolVar(&o.SkipMissingSkills, "skip-missing-skills", false, "leave a note instead of failing when a skill cannot be loaded")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {task_id, mode, bytes, parts: [{kind, name, bytes}], skills, text, ...}")
	RegisterFlagCompletion(cmd, "mode", CompleteModes(f))
	RegisterFlagCompletion(cmd, "skill-format", cobra.FixedCompletions(skillFormats, NoFiles))
	return cmd
}

var skillFormats = []string{skills.FormatFull, skills.FormatSummary, skills.FormatInstructionsOnly}

func promptRun(ctx context.Context, o *PromptOptions) error {
	override := o.TaskOverride
	if override == "-" {
		b, err := io.ReadAll(o.IO.In)
		if err != nil {
			return fmt.Errorf("read --task-override from stdin: %w", err)
		}
		override = string(b)
	}
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	t, err := prompt.LoadTask(ctx, ws, o.ID)
	if err != nil {
		return err
	}
	// Context files are relative to the current folder, like any CLI path.
	files := make([]string, len(o.ContextFiles))
	for i, p := range o.ContextFiles {
		if !filepath.IsAbs(p) {
			p = filepath.Join(o.Cwd, p)
		}
		files[i] = p
	}
	p, err := prompt.Assemble(ctx, ws, prompt.Input{
		Task: t, Mode: o.Mode, TaskOverride: override, ContextFiles: files,
		SkillFormat: o.SkillFormat, SkipMissingSkills: o.SkipMissingSkills, Getenv: o.Getenv,
	})
	if err != nil {
		return err
	}
	PrintWarnings(o.IO, p.Warnings)
	for _, m := range p.MissingSkills {
		fmt.Fprintf(o.IO.ErrOut, "warning: skill %q could not be loaded; the prompt carries a note instead\n", m)
	}
	if o.JSON {
		return jsonout.Write(o.IO.Out, promptJSON{TaskID: t.ID, Mode: p.Mode, SkillFormat: o.SkillFormat, Bytes: len(p.Text),
			Parts: p.Parts, Skills: p.Skills, MissingSkills: p.MissingSkills, Warnings: p.Warnings, Text: p.Text})
	}
	_, err = io.WriteString(o.IO.Out, p.Text)
	return err
}
