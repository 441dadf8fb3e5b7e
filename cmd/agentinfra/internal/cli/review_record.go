package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewRecordOptions is what `review record` runs with.
type ReviewRecordOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	ID       string
	Agent    string
	Branch   string
	Worktree string
	Base     string
	Run      string
	Remote   string
	JSON     bool
}

func NewCmdReviewRecord(f *Factory, runF func(context.Context, *ReviewRecordOptions) error) *cobra.Command {
	o := &ReviewRecordOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "record ID --agent NAME",
		Short: "Record an agent's work on a task as the task's change (what the end of its run does)",
		Long: `record makes what an agent left on its branch the task's change: whatever is
uncommitted in its worktree is committed on its branch (message "ID: description",
the agent as author), and the change — the branch, the base it started from, its
commits — is recorded in the task folder's change.json and its README's Review
section. Recording again (after review changes) starts a new round.

The end of a fleet run on a task does this; record is for work done otherwise.
--branch defaults to agent/NAME (fleet.branch_prefix), --worktree to the worktree
that has it checked out, --base to the branch checked out in the workspace.

With --remote, the work was done elsewhere (a Coder workspace) and pushed: the
branch is fetched from that remote of this clone into the change's ref
(refs/agentinfra/changes/ID), nothing of this machine's worktrees is touched,
and the change lands here as any other.`,
		Example: `  agentinfra review record 3f9a2c --agent papi
  agentinfra review record 3f9a2c --agent ws-papi --remote origin
  agentinfra review record 3f9a2c --agent papi --base main --worktree ../repo-agents/papi --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "REVIEW", "IN_PROGRESS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if o.Agent == "" {
				return UsageErrorf("--agent is required: the agent whose work the change is\nrun 'agentinfra review record --help' for usage")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewRecordRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Agent, "agent", "", "the agent whose work it is (required)")
	cmd.Flags().StringVar(&o.Branch, "branch", "", "the agent's branch (default: agent/NAME)")
	cmd.Flags().StringVar(&o.Worktree, "worktree", "", "the agent's worktree (default: the one on its branch)")
	cmd.Flags().StringVar(&o.Base, "base", "", "the branch the change lands on (default: the workspace's)")
	cmd.Flags().StringVar(&o.Run, "run", "", "the run the work was done in, for the commit's trailer")
	cmd.Flags().StringVar(&o.Remote, "remote", "", "fetch the branch from this remote (the work was pushed from a Coder workspace)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the change as JSON")
	return cmd
}

func reviewRecordRun(ctx context.Context, o *ReviewRecordOptions) error {
	svc, ws, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	in := review.RecordInput{Task: o.ID, Agent: o.Agent, Run: o.Run, Branch: o.Branch, Worktree: o.Worktree, BaseBranch: o.Base, Remote: o.Remote}
	if in.Branch == "" || in.BaseBranch == "" {
		cfg, err := ws.Config()
		if err != nil {
			return err
		}
		fc, err := cfg.Fleet()
		if err != nil {
			return err
		}
		if in.Branch == "" {
			prefix := fc.BranchPrefix
			if prefix == "" {
				prefix = "agent/"
			}
			in.Branch = prefix + o.Agent
		}
		if in.BaseBranch == "" && len(fc.Projects) > 0 {
			in.BaseBranch = fc.Projects[0].BaseBranch
		}
		if in.BaseBranch == "" {
			in.BaseBranch = review.CurrentBranch(ctx, ws.Root)
		}
	}
	if in.Worktree == "" && in.Remote != "" {
		in.Worktree = ws.Root // the clone the branch is fetched into
	}
	if in.Worktree == "" {
		if in.Worktree, err = review.FindWorktree(ctx, ws.Root, in.Branch); err != nil {
			return err
		}
		if in.Worktree == "" {
			return &agenterr.Error{Kind: agenterr.NotFound, Field: "worktree", Reason: fmt.Sprintf("no worktree has %s checked out: name it with --worktree", in.Branch)}
		}
	}
	c, err := svc.Record(ctx, in)
	if err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, c)
	}
	fmt.Fprintf(o.IO.Out, "recorded %s's change of %s (round %d): %d commit(s) on %s from %s at %s\n", termsafe.Line(o.Agent), c.Task, c.Round, len(c.Commits), termsafe.Line(c.Branch), termsafe.Line(c.BaseBranch), reviewShort(c.Base))
	if c.Committed != "" {
		fmt.Fprintf(o.IO.Out, "committed what was left uncommitted as %s\n", reviewShort(c.Committed))
	}
	return nil
}
