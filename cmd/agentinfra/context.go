package main

import (
	"fmt"
	"io"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/taskcontext"
	"github.com/spf13/cobra"
)

// newCmdTaskContext is `agentinfra task context ID`; the task command group adds it.
func newCmdTaskContext(f *Factory) *cobra.Command {
	var asJSON bool
	var opts taskcontext.Options
	cmd := &cobra.Command{
		Use:   "context ID",
		Short: "Print what an agent needs to pick up a task: row, README, latest tracking, artifacts, links, skills, mode",
		Long: fmt.Sprintf(`Print the context of a task: its matrix row, its folder, its README, the
latest tracking entries (the last --tracking files of tracking/ by name, each
cut to its last --tracking-bytes bytes), the files under artifacts/, the
README's Markdown links resolved to workspace paths (flagging missing ones and
never following links that leave the workspace), summaries of the task's
skills (a missing skill is reported, not fatal) and the mode file.

Defaults: --tracking %d, --tracking-bytes %d; the README is cut at %d bytes and
the artifacts list at %d entries, and the output says when anything was cut.`,
			taskcontext.DefaultTrackingFiles, taskcontext.DefaultTrackingBytes, taskcontext.DefaultReadmeBytes, taskcontext.DefaultArtifacts),
		Example: `  agentinfra task context 3f9a2c
  agentinfra task context 3f9a2c --tracking 2 --json | jq '.links[] | select(.status == "missing")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.TrackingFiles < 0 || opts.TrackingBytes < 0 {
				return usageErrorf("--tracking and --tracking-bytes must be positive")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			opts.Getenv = f.Getenv
			c, err := taskcontext.Build(cmd.Context(), ws, args[0], opts)
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(f.IO.Out, c)
			}
			_, err = io.WriteString(f.IO.Out, taskcontext.Render(c))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {task, task_dir, archived, readme, tracking, artifacts, links, skills, mode}")
	cmd.Flags().IntVar(&opts.TrackingFiles, "tracking", taskcontext.DefaultTrackingFiles, "how many of the latest tracking files to include")
	cmd.Flags().IntVar(&opts.TrackingBytes, "tracking-bytes", taskcontext.DefaultTrackingBytes, "keep at most the last N bytes of each tracking file")
	return cmd
}
