package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskClaimOptions is what `task claim` runs with.
type TaskClaimOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	ID    string
	Agent string
	JSON  bool
}

func NewCmdTaskClaim(f *Factory, runF func(context.Context, *TaskClaimOptions) error) *cobra.Command {
	o := &TaskClaimOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "claim ID --agent @name",
		Short: "Take a TODO task: IN_PROGRESS with you as its agent, unless someone has it",
		Long: `claim sets a TODO task IN_PROGRESS and adds --agent to its Agents (last: the
holder of an IN_PROGRESS task is the last @mention of Agents), logging the status
change in the task README. It is a compare-and-set under the matrix lock: of many
agents claiming one task at once, exactly one wins.

Claiming a task you already hold succeeds and changes nothing. A task held by
another agent, or in any status but TODO, is refused (exit 1) with its holder or
status, and nothing is written.

On a matrix whose task table has no Agents column, the holder is recorded in the
task README's status log ("status TODO → IN_PROGRESS by @coder: claimed by @coder"; a task
with no folder gets one first), and task show prints it; agentinfra migrate
--add-columns adds the column and moves the holders into it.`,
		Example: `  agentinfra task claim 3f9a2c --agent @coder
  agentinfra task claim 3f9a2c --agent coder --json
  agentinfra task claim "$(agentinfra task list --status TODO --limit 1 | cut -f1)" --agent @papi || echo "taken"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "TODO", "IN_PROGRESS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if o.Agent == "" {
				return UsageErrorf("--agent is required: the @mention of the agent taking the task\nrun 'agentinfra task claim --help' for usage")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskClaimRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Agent, "agent", "", "the @mention of the agent taking the task (required)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {task, before, changed, log_file, holder} as JSON")
	return cmd
}

func taskClaimRun(ctx context.Context, o *TaskClaimOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	res, err := task.Claim(ctx, ws, o.ID, o.Agent, o.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, struct {
			Task    matrix.Task `json:"task"`
			Before  matrix.Task `json:"before"`
			Changed []string    `json:"changed"`
			LogFile string      `json:"log_file"`
			Holder  string      `json:"holder"`
		}{res.After, res.Before, res.Changed, rel(ws, res.LogFile), res.Holder})
	}
	holder := res.Holder
	if len(res.Changed) == 0 {
		fmt.Fprintf(o.IO.Out, "%s: already IN_PROGRESS, held by %s\n", res.After.ID, holder)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "claimed %s for %s: status %s → %s\n", res.After.ID, holder, res.Before.Status, res.After.Status)
	return nil
}
