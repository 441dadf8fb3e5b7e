package full

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/runner"
)

// AgentStartOptions is what `agent start` runs with.
type AgentStartOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	// Start has the agent's name and what to work on: the words after
	// it, --task or --next.
	Start fleet.StartInput
	JSON  bool
}

func NewCmdAgentStart(f *Factory, runF func(context.Context, *AgentStartOptions) error) *cobra.Command {
	o := &AgentStartOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "start NAME (TEXT | --task ID | --next)",
		Short: "Give an idle agent a task: free text, a matrix task, or the next ready one",
		Long: `Give an idle agent a task. With --task ID the matrix task is claimed for the agent
(IN_PROGRESS, @NAME added to Agents; refused when another agent holds it) and the
agent gets the standard prompt; when the run ends the task goes to REVIEW, or to
BLOCKED when it failed; a BLOCKED task named with --task is reopened first (TODO,
logged in its README) and then claimed. --next claims the highest-priority ready
task (TODO, every Deps task DONE). The run is detached: this command returns once
the run is running (at most 10s; the message says when it is still starting).`,
		Example: `  agentinfra agent start papi "Add a retry to the fetcher"
  agentinfra agent start papi --task 3f9a2c
  agentinfra agent start sony --next --json
  agentinfra agent start papi --task 3f9a2c --approval-mode ask   # supervised: see agentinfra inbox`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Start.Name, o.Start.Text, o.Start.Source = args[0], strings.Join(args[1:], " "), f.fleetSource()
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentStartRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Start.TaskID, "task", "", "a matrix task ID to claim and work on")
	cmd.Flags().BoolVar(&o.Start.Next, "next", false, "claim the highest-priority ready task")
	cmd.Flags().StringVar(&o.Start.ApprovalMode, "approval-mode", "", "tool approval of this run: "+strings.Join(runner.ApprovalModes, ", ")+
		" (default: the agent's, else fleet.approval_mode); ask waits for agentinfra approve on what the policy does not allow")
	cli.RegisterFlagCompletion(cmd, "approval-mode", cobra.FixedCompletions(runner.ApprovalModes, cli.NoFiles))
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {task, agent_status, message} as JSON")
	cli.RegisterFlagCompletion(cmd, "task", cli.CompleteTaskIDs(f.Factory, "TODO"))
	return cmd
}

func agentStartRun(ctx context.Context, o *AgentStartOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	r, err := fleet.StartAgent(ctx, fl, o.Start, 0)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	res := fleet.WithWarnings(r, notes.Texts()).(fleet.TaskResult)
	cli.PrintWarnings(o.IO, res.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, res)
	}
	fmt.Fprintln(o.IO.Out, res.Message)
	return nil
}
