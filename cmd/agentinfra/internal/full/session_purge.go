package full

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// newCmdSessionPurge is `session purge [--dry-run]`.
func newCmdSessionPurge(f *Factory) *cobra.Command {
	o := f.keepMovingOptions()
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete sessions that ended more than retention_days ago, with all that is theirs",
		Long: `Deletes the sessions that ended (terminated or interrupted) more than
supervision.retention_days ago (default 30), with their requests, alerts,
prompts, steering messages, checkpoints (and their git refs) and audit rows,
in short batches that never hold the database for long. Live sessions are
never touched. --dry-run counts what would go.`,
		Example: "  agentinfra session purge --dry-run\n  agentinfra session purge\n  agentinfra session purge --older-than 7 --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return sessionPurgeRun(cmd.Context(), o) },
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "count what would be deleted; delete nothing")
	cmd.Flags().IntVar(&o.Older, "older-than", 0, "days (default: supervision.retention_days, 30)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the counts as JSON")
	return cmd
}

func sessionPurgeRun(ctx context.Context, o *KeepMovingOptions) error {
	if o.Older < 0 {
		return cli.UsageErrorf("--older-than is a number of days")
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	keep, err := env.svc.Retention()
	if err != nil {
		return err
	}
	if o.Older > 0 {
		keep = time.Duration(o.Older) * 24 * time.Hour
	}
	before := o.Now().Add(-keep)
	rep, err := env.svc.Purge(ctx, env.user, before, o.DryRun)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, rep)
	}
	verb := "Purged"
	if o.DryRun {
		verb = "Would purge"
	}
	fmt.Fprintf(o.IO.Out, "%s %d session(s) that ended before %s: %d requests, %d alerts, %d prompts, %d steering messages, %d checkpoints, %d audit rows.\n",
		verb, rep.Sessions, before.Format("2006-01-02"), rep.Requests, rep.Alerts, rep.Prompts, rep.Steering, rep.Checkpoints, rep.Audit)
	return nil
}
