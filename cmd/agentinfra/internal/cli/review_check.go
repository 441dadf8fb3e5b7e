package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewCheckOptions is what `review check` runs with.
type ReviewCheckOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	ID   string
	JSON bool
}

func NewCmdReviewCheck(f *Factory, runF func(context.Context, *ReviewCheckOptions) error) *cobra.Command {
	o := &ReviewCheckOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "check ID",
		Short: "Run a change's checks (review.checks) in its agent's worktree and keep the results",
		Long: `check runs the commands of review.checks in .agent/config.yaml, one after the other,
in the agent's worktree, which must be at the change's last commit with nothing
uncommitted. Each runs without a shell (a command line is split into words the way
the command registry splits it: quotes work, pipes and variables do not), within
review.check_timeout (default 10m); whatever a check starts ends with it.

The results are kept with the change: review list and show print them, and approve
lands only a change whose checks passed on its last commit (or --force).
Exits 1 when a check failed.`,
		Example: `  agentinfra review check 3f9a2c
  agentinfra review check 3f9a2c --json | jq '.results[] | {command, passed}'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "REVIEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewCheckRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {head, at, passed, results: [{command, exit_code, passed, timed_out, duration_ms, output, error}]} as JSON")
	return cmd
}

func reviewCheckRun(ctx context.Context, o *ReviewCheckOptions) error {
	svc, _, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	run, err := svc.Check(ctx, o.ID)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := WriteJSON(o.IO.Out, run); err != nil {
			return err
		}
	} else {
		color := useColor(o.IO, o.Getenv)
		for _, r := range run.Results {
			mark := colorize(color, "32", "✓")
			if !r.Passed {
				mark = colorize(color, "31", "✗")
			}
			fmt.Fprintf(o.IO.Out, "%s %s: %s (%.1fs)\n", mark, termsafe.Line(r.Command), termsafe.Line(r.Outcome()), float64(r.DurationMS)/1000)
			if !r.Passed && r.Output != "" {
				fmt.Fprintln(o.IO.Out, reviewIndent(reviewText(reviewLastLines(r.Output, 15))))
			}
		}
	}
	if !run.Passed {
		return &ExitError{Code: 1}
	}
	return nil
}
