package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

func newCmdTaskScaffold(f *Factory) *cobra.Command {
	var (
		o      task.ScaffoldOptions
		asJSON bool
	)
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			t, dir, err := task.ScaffoldTask(cmd.Context(), ws, args[0], o, f.Now())
			if err != nil {
				return taskErr(err)
			}
			if asJSON {
				return writeJSON(f.IO.Out, struct {
					Task matrix.Task `json:"task"`
					Dir  string      `json:"dir"`
				}{t, rel(ws, dir)})
			}
			fmt.Fprintln(f.IO.Out, rel(ws, dir))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Slug, "slug", "", "folder name after the ID (default: from the description)")
	fl.BoolVar(&asJSON, "json", false, "print {task, dir} as JSON")
	return cmd
}
