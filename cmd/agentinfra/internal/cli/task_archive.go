package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskArchiveOptions is what `task archive` runs with.
type TaskArchiveOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)

	// ID is the task to archive, "" with AllDone.
	ID      string
	AllDone bool
	JSON    bool
}

func NewCmdTaskArchive(f *Factory, runF func(context.Context, *TaskArchiveOptions) error) *cobra.Command {
	o := &TaskArchiveOptions{IO: f.IO, Workspace: f.Workspace}
	cmd := &cobra.Command{
		Use:   "archive ID | --all-done",
		Short: "Move a DONE task's folder to .agent/archive/",
		Long: `archive moves .agent/tasks/{id}_*/ to .agent/archive/. The task must be DONE; the
matrix row stays as the permanent record. --all-done archives every DONE task that
still has a folder in .agent/tasks/ (all of them move, or none).`,
		Example: `  agentinfra task archive 3f9a2c
  agentinfra task archive --all-done
  agentinfra task archive --all-done --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "DONE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.AllDone == (len(args) == 1) {
				return UsageErrorf("give either a task ID or --all-done\nrun 'agentinfra task archive --help' for usage")
			}
			if len(args) == 1 {
				o.ID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskArchiveRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.AllDone, "all-done", false, "archive every DONE task that still has a folder")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the moves as a JSON array of {id, from, to}")
	return cmd
}

func taskArchiveRun(ctx context.Context, o *TaskArchiveOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	var moved []task.Archived
	if o.AllDone {
		moved, err = task.ArchiveAllDone(ctx, ws)
	} else {
		moved, err = task.Archive(ctx, ws, o.ID)
	}
	if err != nil {
		return err
	}
	out := make([]task.Archived, len(moved))
	for i, m := range moved {
		out[i] = task.Archived{ID: m.ID, From: rel(ws, m.From), To: rel(ws, m.To)}
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(o.IO.Out, "nothing to archive: no DONE task has a folder in .agent/tasks/")
	}
	for _, m := range out {
		fmt.Fprintf(o.IO.Out, "archived %s: %s → %s\n", m.ID, m.From, m.To)
	}
	return nil
}
