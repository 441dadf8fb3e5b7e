package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/task"
)

func newCmdTaskArchive(f *Factory) *cobra.Command {
	var allDone, asJSON bool
	cmd := &cobra.Command{
		Use:   "archive ID | --all-done",
		Short: "Move a DONE task's folder to .agent/archive/",
		Long: `archive moves .agent/tasks/{id}_*/ to .agent/archive/. The task must be DONE; the
matrix row stays as the permanent record. --all-done archives every DONE task that
still has a folder in .agent/tasks/ (all of them move, or none).`,
		Example: `  agentinfra task archive 3f9a2c
  agentinfra task archive --all-done
  agentinfra task archive --all-done --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if allDone == (len(args) == 1) {
				return usageErrorf("give either a task ID or --all-done\nrun 'agentinfra task archive --help' for usage")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			var moved []task.Archived
			if allDone {
				moved, err = task.ArchiveAllDone(cmd.Context(), ws)
			} else {
				moved, err = task.Archive(cmd.Context(), ws, args[0])
			}
			if err != nil {
				return taskErr(err)
			}
			out := make([]task.Archived, len(moved))
			for i, m := range moved {
				out[i] = task.Archived{ID: m.ID, From: rel(ws, m.From), To: rel(ws, m.To)}
			}
			if asJSON {
				return writeJSON(f.IO.Out, out)
			}
			if len(out) == 0 {
				fmt.Fprintln(f.IO.Out, "nothing to archive: no DONE task has a folder in .agent/tasks/")
			}
			for _, m := range out {
				fmt.Fprintf(f.IO.Out, "archived %s: %s → %s\n", m.ID, m.From, m.To)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&allDone, "all-done", false, "archive every DONE task that still has a folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the moves as a JSON array of {id, from, to}")
	return cmd
}
