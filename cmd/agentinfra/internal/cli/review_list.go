package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewListOptions is what `review list` runs with.
type ReviewListOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	JSON bool
}

func NewCmdReviewList(f *Factory, runF func(context.Context, *ReviewListOptions) error) *cobra.Command {
	o := &ReviewListOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tasks in REVIEW with their changes: agent, branch, size, checks, age",
		Long: `list prints every task in REVIEW, in the matrix's order, with its change: the agent,
its branch, the files changed and lines added and removed against the base, the
checks (passed, failed, not run on the change's last commit, none configured), the
change's state (review, conflict) and how long it has waited.

A task in REVIEW with no change recorded is listed as "no change"; one whose record
cannot be read is listed with the problem, and the command exits 1.`,
		Example: `  agentinfra review list
  agentinfra review list --json | jq -r '.[] | select(.checks == "passed") | .task.id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print [{task, change, files, added, deleted, checks, age_seconds, problem}] as JSON")
	return cmd
}

func reviewListRun(ctx context.Context, o *ReviewListOptions) error {
	svc, _, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	items, err := svc.List(ctx)
	if err != nil {
		return err
	}
	var problems []string
	for _, it := range items {
		if it.Problem != "" {
			problems = append(problems, fmt.Sprintf("task %s: %s", it.Task.ID, it.Problem))
		}
	}
	if o.JSON {
		if err := WriteJSON(o.IO.Out, items); err != nil {
			return err
		}
	} else if len(items) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "no task is in REVIEW")
	} else {
		w := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tAGENT\tBRANCH\tFILES\t+/−\tCHECKS\tSTATE\tAGE\tDESCRIPTION")
		for _, it := range items {
			agent, branch, size, when := task.Holder(it.Task), "-", "-", "-"
			if c := it.Change; c != nil {
				agent, branch = "@"+c.Agent, c.Branch
				size, when = fmt.Sprintf("+%d −%d", it.Added, it.Deleted), reviewAge(it.AgeSeconds)
			}
			files, checks := "-", it.Checks
			if it.Change != nil {
				files = fmt.Sprint(it.Files)
			} else {
				checks = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Task.ID, termsafe.Line(agent), termsafe.Line(branch), files, size, checks, it.State(), when, termsafe.Line(reviewTitle(it.Task.Description)))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		// Never less data with exit code 0.
		PrintWarnings(o.IO, problems)
		return &ExitError{Code: 1}
	}
	return nil
}

// oneLineDesc is a description's first line, at most 60 characters.
func reviewTitle(s string) string {
	first, _, _ := strings.Cut(strings.ReplaceAll(s, "<br>", "\n"), "\n")
	return mdtext.Shorten(first, 60)
}
