package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskCreateOptions is what `task create` runs with.
type TaskCreateOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	// Create holds the flags; an unset --priority or --difficulty is ""
	// (the workspace's vocabulary gives the default).
	Create task.CreateOptions
	JSON   bool
}

func NewCmdTaskCreate(f *Factory, runF func(context.Context, *TaskCreateOptions) error) *cobra.Command {
	o := &TaskCreateOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv}
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
			c := &o.Create
			if strings.TrimSpace(c.Description) == "" {
				return UsageErrorf("--description is required: say what the task is\nrun 'agentinfra task create --help' for usage")
			}
			if strings.TrimSpace(c.Mode) == "" {
				return UsageErrorf("--mode is required: the agent mode that will work on the task (a file in .agent/agents/)\nrun 'agentinfra task create --help' for usage")
			}
			if !cmd.Flags().Changed("priority") {
				c.Priority = ""
			}
			if !cmd.Flags().Changed("difficulty") {
				c.Difficulty = ""
			}
			c.Skills = splitCSV(c.Skills)
			c.Agents = splitCSV(c.Agents)
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskCreateRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Create.Description, "description", "d", "", "what the task is (required)")
	fl.StringVarP(&o.Create.Mode, "mode", "m", "", "agent mode, a file in .agent/agents/ (required)")
	fl.StringVarP(&o.Create.Priority, "priority", "p", "P2", "priority: P1, P2, P3 or P4 (or an alias: 1, high, ...)")
	fl.StringVar(&o.Create.Difficulty, "difficulty", "med", "difficulty: easy, med or hard (or an alias: S, M, L, medium, ...)")
	fl.StringSliceVar(&o.Create.Skills, "skills", nil, "skills, comma-separated (folders in .agent/skills/)")
	fl.StringSliceVar(&o.Create.Agents, "agent", nil, "@mention of an agent on the task (repeatable)")
	fl.StringVar(&o.Create.Slug, "slug", "", "folder name after the ID (default: from the description)")
	fl.BoolVar(&o.Create.Force, "force", false, "accept a mode or skills that have no file and no row uses (yet)")
	fl.BoolVar(&o.JSON, "json", false, "print {task, dir} as JSON")
	RegisterFlagCompletion(cmd, "mode", CompleteModes(f))
	RegisterFlagCompletion(cmd, "skills", completeSkills(f, true))
	return cmd
}

func taskCreateRun(ctx context.Context, o *TaskCreateOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	in := o.Create
	in.Getenv = o.Getenv
	c, err := task.CreateTask(ctx, ws, in, o.Now())
	if err != nil {
		return err
	}
	PrintWarnings(o.IO, c.Warnings)
	if o.JSON {
		return WriteJSON(o.IO.Out, struct {
			Task     matrix.Task `json:"task"`
			Dir      string      `json:"dir"`
			Warnings []string    `json:"warnings,omitempty"`
		}{c.Task, rel(ws, c.Dir), c.Warnings})
	}
	fmt.Fprintln(o.IO.Out, c.Task.ID)
	return nil
}
