package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

func NewCmdReview(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Review the change of a finished task: list, show, send back with comments, check, land",
		Long: `review works on the changes of tasks in REVIEW. When an agent's run on a task ends,
what it left on its branch agent/NAME becomes the task's change (its commits from the
base it started from, recorded in the task folder's change.json); review shows it
against that base, sends it back to the agent with comments, runs its checks
(review.checks in .agent/config.yaml), and lands it on the base branch.

Landing never touches your uncommitted work: where the base branch is checked out
with local changes, it is updated only if the change leaves those files alone;
otherwise it is refused naming them. A change that conflicts with the base is refused,
naming the files, and nothing changes. See docs/review.md.

Exit codes: 0 success, 1 failure (or failing checks), 2 usage error, 3 no such task
or change, 4 conflict (with the base, with local changes, a task not in REVIEW),
5 refused (checks not passed: --force).`,
		Example: `  agentinfra review list
  agentinfra review record 3f9a2c --agent papi
  agentinfra review show 3f9a2c
  agentinfra review changes 3f9a2c --comment "return the error" --file fetch.go --line 42
  agentinfra review check 3f9a2c
  agentinfra review approve 3f9a2c --squash`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		NewCmdReviewList(f, nil),
		NewCmdReviewRecord(f, nil),
		NewCmdReviewShow(f, nil),
		NewCmdReviewChanges(f, nil),
		NewCmdReviewCheck(f, nil),
		NewCmdReviewApprove(f, nil),
	)
	return cmd
}

// reviewService is the review service of the command's workspace.
func reviewService(ws func() (*workspace.Workspace, error), now func() time.Time) (*review.Service, *workspace.Workspace, error) {
	w, err := ws()
	if err != nil {
		return nil, nil, err
	}
	return review.New(w, now), w, nil
}

// age says how long ago in one unit: 45s, 12m, 3h, 2d.
func reviewAge(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(seconds, 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
