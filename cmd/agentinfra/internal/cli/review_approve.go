package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewApproveOptions is what `review approve` runs with.
type ReviewApproveOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	ID                    string
	Squash, Merge, Rebase bool
	Force                 bool
	JSON                  bool
}

func NewCmdReviewApprove(f *Factory, runF func(context.Context, *ReviewApproveOptions) error) *cobra.Command {
	o := &ReviewApproveOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "approve ID [--squash|--merge|--rebase] [--force]",
		Short: "Land a task's change on its base branch; the task becomes DONE",
		Long: `approve lands a task's change on the branch it started from, moves the task to DONE
(you are the actor), and moves the agent's branch to the new base, so that its next
task starts from there.

  --squash  one commit, authored by the agent, listing the change's commits (default)
  --merge   a merge commit of the base and the change
  --rebase  the change's commits one by one on the base, with their authors

The default is review.strategy in .agent/config.yaml, else squash.

Nothing changes when approve refuses:
  - the change conflicts with the base: the files are named, the task stays in
    REVIEW marked conflict (send it back with review changes to have it rebased);
  - the base branch is checked out (here or in another worktree) with local changes
    to files the change touches: they are named; commit or stash them and approve
    again. Local changes to other files are left as they are, and stay uncommitted;
  - the checks (review.checks) failed or have not run on the change's last commit:
    run review check, or land it anyway with --force.`,
		Example: `  agentinfra review approve 3f9a2c
  agentinfra review approve 3f9a2c --merge
  agentinfra review approve 3f9a2c --force --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "REVIEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewApproveRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Squash, "squash", false, "land as one commit")
	cmd.Flags().BoolVar(&o.Merge, "merge", false, "land with a merge commit")
	cmd.Flags().BoolVar(&o.Rebase, "rebase", false, "land the change's commits one by one")
	cmd.MarkFlagsMutuallyExclusive("squash", "merge", "rebase")
	cmd.Flags().BoolVar(&o.Force, "force", false, "land even though the checks failed or have not run")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {change, task, reset, updated_worktrees, notes} as JSON")
	return cmd
}

func reviewApproveRun(ctx context.Context, o *ReviewApproveOptions) error {
	svc, _, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	strategy := ""
	switch {
	case o.Squash:
		strategy = "squash"
	case o.Merge:
		strategy = "merge"
	case o.Rebase:
		strategy = "rebase"
	}
	res, err := svc.Approve(ctx, o.ID, review.ApproveOptions{Strategy: strategy, Force: o.Force})
	if err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, res)
	}
	c, l := res.Change, res.Change.Landed
	if l.Commit == "" {
		fmt.Fprintf(o.IO.Out, "%s: the change made no difference to %s; nothing was committed\n", c.Task, c.BaseBranch)
	} else {
		fmt.Fprintf(o.IO.Out, "landed %s on %s as %s (%s of %d commit(s))\n", c.Task, c.BaseBranch, reviewShort(l.Commit), l.Strategy, len(c.Commits))
	}
	fmt.Fprintf(o.IO.Out, "task %s is %s\n", res.Task.ID, res.Task.Status)
	for _, w := range res.Updated {
		fmt.Fprintf(o.IO.Out, "updated the checkout %s (your other local changes are as they were)\n", w)
	}
	if res.Reset != "" {
		fmt.Fprintf(o.IO.Out, "%s is at the new %s\n", c.Branch, c.BaseBranch)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(o.IO.Out, "note:", termsafe.Line(n))
	}
	return nil
}
