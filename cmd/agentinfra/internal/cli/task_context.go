package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/taskcontext"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskContextOptions is what `task context` runs with.
type TaskContextOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	ID string
	// Context holds --tracking and --tracking-bytes.
	Context taskcontext.Options
	JSON    bool
}

func NewCmdTaskContext(f *Factory, runF func(context.Context, *TaskContextOptions) error) *cobra.Command {
	o := &TaskContextOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
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
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if o.Context.TrackingFiles < 0 || o.Context.TrackingBytes < 0 {
				return UsageErrorf("--tracking and --tracking-bytes must be positive")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskContextRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {task, task_dir, archived, readme, tracking, artifacts, links, skills, mode}")
	cmd.Flags().IntVar(&o.Context.TrackingFiles, "tracking", taskcontext.DefaultTrackingFiles, "how many of the latest tracking files to include")
	cmd.Flags().IntVar(&o.Context.TrackingBytes, "tracking-bytes", taskcontext.DefaultTrackingBytes, "keep at most the last N bytes of each tracking file")
	return cmd
}

func taskContextRun(ctx context.Context, o *TaskContextOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	opts := o.Context
	opts.Getenv = o.Getenv
	c, err := taskcontext.Build(ctx, ws, o.ID, opts)
	if err != nil {
		return err
	}
	if o.JSON {
		return jsonout.Write(o.IO.Out, c)
	}
	_, err = io.WriteString(o.IO.Out, taskcontext.Render(c))
	return err
}
