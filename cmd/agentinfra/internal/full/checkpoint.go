package full

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

func NewCmdCheckpoint(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Snapshots of a session's worktree: create, list, restore",
		Long: `A checkpoint records a session's whole worktree — tracked files with their
changes, new files, recursively (not what .gitignore ignores) — as a git commit
under the private ref refs/agentinfra/checkpoints/ (no branch, the index and
HEAD untouched), with a hash per file. Restore lists the files that changed
since and refuses without --force when any did; it stops the session's run
first. supervision.checkpoint_before_edit in .agent/config.yaml takes one
before each approved edit.`,
		Example: `  agentinfra checkpoint create 3 --label "before the refactor"
  agentinfra checkpoint list 3
  agentinfra checkpoint restore 7
  agentinfra checkpoint restore 7 --force`,
	}
	mk := func(use, short, example string, args cobra.PositionalArgs, run func(context.Context, *KeepMovingOptions) error) (*cobra.Command, *KeepMovingOptions) {
		o := f.keepMovingOptions()
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error { o.Args = a; return run(cmd.Context(), o) }}
		c.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
		return c, o
	}
	create, co := mk("create SESSION", "Snapshot the session's worktree", "  agentinfra checkpoint create 3 --label \"tests pass\"", cobra.ExactArgs(1), checkpointCreateRun)
	create.Flags().StringVar(&co.Label, "label", "", "a name for the checkpoint")
	list, _ := mk("list [SESSION]", "Checkpoints, oldest first (of one session or all)", "  agentinfra checkpoint list\n  agentinfra checkpoint list 3 --json", cobra.MaximumNArgs(1), checkpointListRun)
	restore, ro := mk("restore CHECKPOINT", "Put the worktree back as the checkpoint recorded it", "  agentinfra checkpoint restore 7 --force", cobra.ExactArgs(1), checkpointRestoreRun)
	restore.Flags().BoolVar(&ro.Force, "force", false, "restore even though files changed since the checkpoint (they are overwritten)")
	cmd.AddCommand(create, list, restore)
	return cmd
}

func checkpointCreateRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("session", o.Args[0])
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := env.svc.CreateCheckpoint(ctx, env.user, id, o.Label)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, c)
	}
	fmt.Fprintf(o.IO.Out, "Checkpoint %d of session %d: %s (%s)\n", c.ID, id, c.Commit[:12], c.Ref)
	return nil
}

func checkpointListRun(ctx context.Context, o *KeepMovingOptions) error {
	var id int64
	if len(o.Args) == 1 {
		var err error
		if id, err = parseID("session", o.Args[0]); err != nil {
			return err
		}
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if id != 0 {
		// "No checkpoints." is for a session that has none, not one that
		// does not exist.
		if _, err := env.svc.Session(ctx, id); err != nil {
			return err
		}
	}
	cps, err := env.svc.Checkpoints(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, orEmpty(cps))
	}
	if len(cps) == 0 {
		fmt.Fprintln(o.IO.Out, "No checkpoints.")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSESSION\tCOMMIT\tAGE\tBY\tLABEL")
	for _, c := range cps {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.SessionID, orDash(short(c.Commit)), since(o.Now(), c.CreatedAt), supervision.Handle(c.CreatedBy), termsafe.Line(mdtext.Shorten(oneLine(c.Label), 60)))
	}
	return tw.Flush()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func checkpointRestoreRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("checkpoint", o.Args[0])
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	c, changed, err := env.svc.RestoreCheckpoint(ctx, env.user, supervision.Restore{Checkpoint: id, Force: o.Force, StopLive: true})
	if errors.Is(err, supervision.ErrNotFound) && c.ID == 0 {
		return fmt.Errorf("%w; `agentinfra checkpoint list` shows them", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, struct {
			Checkpoint supervision.Checkpoint         `json:"checkpoint"`
			Changed    []supervision.CheckpointChange `json:"changed"`
		}{c, orEmpty(changed)})
	}
	if len(changed) == 0 {
		fmt.Fprintf(o.IO.Out, "The worktree already matches checkpoint %d.\n", c.ID)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "Restored checkpoint %d in %s:\n", c.ID, c.Dir)
	for _, ch := range changed {
		fmt.Fprintf(o.IO.Out, "  %-8s %s\n", ch.Status, termsafe.Line(ch.Path)) // a name the agent chose
	}
	return nil
}
