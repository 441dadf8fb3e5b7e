package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/handoff"
	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/workspace"
)

type handoffJSON struct {
	Path string `json:"path"` // workspace-relative
	handoff.Report
}

// HandoffOptions is what `handoff` runs with.
type HandoffOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	// Cwd is what a relative --out is relative to.
	Cwd string

	Handoff handoff.Options
	JSON    bool
}

func NewCmdHandoff(f *Factory, runF func(context.Context, *HandoffOptions) error) *cobra.Command {
	o := &HandoffOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Cwd: f.Cwd}
	cmd := &cobra.Command{
		Use:   "handoff",
		Short: "Write a handoff note: open tasks with their latest notes, recently done, next up, git state",
		Long: fmt.Sprintf(`Write .agent/handoffs/{YYMMDD_HHMM}_handoff.md for whoever picks up the work next:
the tasks IN_PROGRESS, REVIEW and BLOCKED with the end of their latest tracking
note; recently done tasks (most recently updated first, at most --done); next up
(TODO by priority, then oldest first, at most --next); and, when the workspace
root is in a git repository, the branch, the uncommitted files and the last %d
commits (read with the git CLI).

A handoff never overwrites a file: when the name is taken, _2, _3, ... is added.
--out FILE writes elsewhere inside the workspace and refuses an existing file.
Prints the path of the file written.`, handoff.Commits),
		Example: `  agentinfra handoff
  agentinfra handoff --out docs/HANDOFF.md
  agentinfra handoff --json | jq '.next_up[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Handoff.Done < 0 || o.Handoff.Next < 0 {
				return UsageErrorf("--done and --next must be positive")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return handoffRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Handoff.Out, "out", "", "write to FILE (relative to the current folder; inside the workspace; must not exist) instead of .agent/handoffs/")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {path, generated_at, in_progress, review, blocked, recently_done, next_up, git, text, ...}")
	cmd.Flags().IntVar(&o.Handoff.Done, "done", handoff.DefaultDone, "how many recently done tasks to list")
	cmd.Flags().IntVar(&o.Handoff.Next, "next", handoff.DefaultNext, "how many TODO tasks to list under next up")
	return cmd
}

func handoffRun(ctx context.Context, o *HandoffOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	opts := o.Handoff
	if opts.Out != "" && !filepath.IsAbs(opts.Out) && o.Cwd != "" {
		opts.Out = filepath.Join(o.Cwd, opts.Out) // like other path flags: relative to the current folder
	}
	path, h, err := handoff.Write(ctx, ws, o.Now(), opts)
	if err != nil {
		return err
	}
	rel := ws.RelPath(path)
	if o.JSON {
		return jsonout.Write(o.IO.Out, handoffJSON{Path: rel, Report: h})
	}
	_, err = fmt.Fprintln(o.IO.Out, rel)
	return err
}
