package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskScaffoldOptions is what `task scaffold` runs with.
type TaskScaffoldOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	ID       string
	Scaffold task.ScaffoldOptions
	JSON     bool
}

func NewCmdTaskScaffold(f *Factory, runF func(context.Context, *TaskScaffoldOptions) error) *cobra.Command {
	o := &TaskScaffoldOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "scaffold ID",
		Short: "Create the missing task folder of an existing row",
		Long: `scaffold creates .agent/tasks/{id}_{slug}/ for a row that has no folder (a row
added by hand, by another tool, or before agentinfra was used): README.md from
.agent/templates/unified_task.md (else the built-in template) with its
placeholders filled, tracking/ and artifacts/. The row is not changed.

The slug defaults to a snake_case form of the description's first line. It
refuses, writing nothing, an unknown ID and a task that already has a folder
(in .agent/tasks/ or .agent/archive/).

Prints the folder; --json prints {task, dir}.`,
		Example: `  agentinfra task scaffold 260120204151
  agentinfra task scaffold a1b2c3 --slug login_fix`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskScaffoldRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Scaffold.Slug, "slug", "", "folder name after the ID (default: from the description)")
	fl.BoolVar(&o.JSON, "json", false, "print {task, dir} as JSON")
	return cmd
}

func taskScaffoldRun(ctx context.Context, o *TaskScaffoldOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	t, dir, err := task.ScaffoldTask(ctx, ws, o.ID, o.Scaffold, o.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, struct {
			Task matrix.Task `json:"task"`
			Dir  string      `json:"dir"`
		}{t, rel(ws, dir)})
	}
	fmt.Fprintln(o.IO.Out, rel(ws, dir))
	return nil
}
