package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/skills"
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

func newCmdPrompt(f *Factory) *cobra.Command {
	var asJSON, skipMissing bool
	var mode, override, format string
	var contextFiles []string
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := skills.ValidFormat(format)
			if err != nil {
				return usageErrorf("--skill-format: %v", err)
			}
			if override == "-" {
				b, err := io.ReadAll(f.IO.In)
				if err != nil {
					return fmt.Errorf("read --task-override from stdin: %w", err)
				}
				override = string(b)
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			t, err := prompt.LoadTask(cmd.Context(), ws, args[0])
			if err != nil {
				return err
			}
			// Context files are relative to the current folder, like any CLI path.
			files := make([]string, len(contextFiles))
			for i, p := range contextFiles {
				if !filepath.IsAbs(p) {
					p = filepath.Join(f.Cwd, p)
				}
				files[i] = p
			}
			p, err := prompt.Assemble(cmd.Context(), ws, prompt.Input{
				Task: t, Mode: mode, TaskOverride: override, ContextFiles: files,
				SkillFormat: fm, SkipMissingSkills: skipMissing, Getenv: f.Getenv,
			})
			if err != nil {
				return err
			}
			for _, w := range p.Warnings {
				fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w)
			}
			for _, m := range p.MissingSkills {
				fmt.Fprintf(f.IO.ErrOut, "warning: skill %q could not be loaded; the prompt carries a note instead\n", m)
			}
			if asJSON {
				return jsonout.Write(f.IO.Out, promptJSON{TaskID: t.ID, Mode: p.Mode, SkillFormat: fm, Bytes: len(p.Text),
					Parts: p.Parts, Skills: p.Skills, MissingSkills: p.MissingSkills, Warnings: p.Warnings, Text: p.Text})
			}
			_, err = io.WriteString(f.IO.Out, p.Text)
			return err
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "agent mode to use instead of the task's")
	cmd.Flags().StringVar(&override, "task-override", "", "instructions that replace the task README ('-' reads stdin)")
	cmd.Flags().StringArrayVar(&contextFiles, "context-file", nil, "file to include, fenced under its path (repeatable)")
	cmd.Flags().StringVar(&format, "skill-format", skills.FormatSummary, "full, summary or instructions_only")
	cmd.Flags().BoolVar(&skipMissing, "skip-missing-skills", false, "leave a note instead of failing when a skill cannot be loaded")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {task_id, mode, bytes, parts: [{kind, name, bytes}], skills, text, ...}")
	return cmd
}
