package full

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
)

// AgentStopOptions is what `agent stop` runs with.
type AgentStopOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Name string
	JSON bool
}

func NewCmdAgentStop(f *Factory, runF func(context.Context, *AgentStopOptions) error) *cobra.Command {
	o := &AgentStopOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop the agent's current run (interrupt, terminate, kill); the agent becomes idle",
		Example: `  agentinfra agent stop papi
  agentinfra agent stop papi --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentStopRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {task, agent_status, message} as JSON")
	return cmd
}

func agentStopRun(ctx context.Context, o *AgentStopOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	res, err := fleet.StopAgent(ctx, fl, o.Name)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	res = fleet.WithWarnings(res, notes.Texts()).(fleet.TaskResult)
	cli.PrintWarnings(o.IO, res.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, res)
	}
	fmt.Fprintln(o.IO.Out, res.Message)
	return nil
}
