package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

func newCmdTaskCreate(f *Factory) *cobra.Command {
	var (
		o      task.CreateOptions
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "create --description D --mode M",
		Short: "Add a TODO row to the matrix and scaffold its task folder",
		Long: `create adds a TODO row (Created = Updated = today) with a fresh random ID and
creates .agent/tasks/{id}_{slug}/ holding README.md (from .agent/templates/unified_task.md,
else the built-in template), tracking/ and artifacts/. The row and the folder are
created together or not at all. The template's placeholders are filled: {{id}} or
[ID], {{title}}/{{name}} or [Task Name] (the description's first line),
{{description}}, {{status}}, {{date}}, {{mode}}, {{priority}}, ... (see
task.RenderReadme); others are left as written.

The slug defaults to a snake_case ASCII form of the description (at most 40
characters). A mode with no file in .agent/agents/ is written with a warning on
stderr (with close names); each skill must exist in .agent/skills/ (or the global
skills folder) unless --force is given.

Prints the new ID; --json prints {task, dir}.`,
		Example: `  agentinfra task create --description "Add retry to fetcher" --mode coder
  agentinfra task create -d "Review the lock code" -m reviewer -p P1 --difficulty hard --skills code-review --agent @reviewer
  id=$(agentinfra task create -d "Map the parser" -m explorer --slug parser_map)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.Description) == "" {
				return usageErrorf("--description is required: say what the task is\nrun 'agentinfra task create --help' for usage")
			}
			if strings.TrimSpace(o.Mode) == "" {
				return usageErrorf("--mode is required: the agent mode that will work on the task (a file in .agent/agents/)\nrun 'agentinfra task create --help' for usage")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			// Unset, the defaults come from the workspace's vocabulary (P2
			// and med unless .agent/config.yaml lists other values).
			if !cmd.Flags().Changed("priority") {
				o.Priority = ""
			}
			if !cmd.Flags().Changed("difficulty") {
				o.Difficulty = ""
			}
			o.Skills = splitCSV(o.Skills)
			o.Agents = splitCSV(o.Agents)
			o.Getenv = f.Getenv
			c, err := task.CreateTask(cmd.Context(), ws, o, f.Now())
			if err != nil {
				return taskErr(err)
			}
			printWarnings(f, c.Warnings)
			if asJSON {
				return writeJSON(f.IO.Out, struct {
					Task     matrix.Task `json:"task"`
					Dir      string      `json:"dir"`
					Warnings []string    `json:"warnings,omitempty"`
				}{c.Task, rel(ws, c.Dir), c.Warnings})
			}
			fmt.Fprintln(f.IO.Out, c.Task.ID)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Description, "description", "d", "", "what the task is (required)")
	fl.StringVarP(&o.Mode, "mode", "m", "", "agent mode, a file in .agent/agents/ (required)")
	fl.StringVarP(&o.Priority, "priority", "p", "P2", "priority: P1, P2, P3 or P4 (or an alias: 1, high, ...)")
	fl.StringVar(&o.Difficulty, "difficulty", "med", "difficulty: easy, med or hard (or an alias: S, M, L, medium, ...)")
	fl.StringSliceVar(&o.Skills, "skills", nil, "skills, comma-separated (folders in .agent/skills/)")
	fl.StringSliceVar(&o.Agents, "agent", nil, "@mention of an agent on the task (repeatable)")
	fl.StringVar(&o.Slug, "slug", "", "folder name after the ID (default: from the description)")
	fl.BoolVar(&o.Force, "force", false, "accept skills that do not exist (yet)")
	fl.BoolVar(&asJSON, "json", false, "print {task, dir} as JSON")
	return cmd
}
