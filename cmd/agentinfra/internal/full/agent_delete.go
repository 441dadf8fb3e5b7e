package full

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
)

// AgentDeleteOptions is what `agent delete` runs with.
type AgentDeleteOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Name  string
	Force bool
	JSON  bool
}

func NewCmdAgentDelete(f *Factory, runF func(context.Context, *AgentDeleteOptions) error) *cobra.Command {
	o := &AgentDeleteOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Stop the agent and remove its worktree; its branch and history are kept, its name freed",
		Long: `Stop the agent's run, remove its worktree and archive its history under
.agent/fleet/archive/. Its branch (agent/NAME) is kept under an archive name
(agent/NAME-archived-STAMP, printed), so the name is free for a new agent. A worktree with
uncommitted changes is refused unless --force.`,
		Example: `  agentinfra agent delete papi
  agentinfra agent delete papi --force --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentDeleteRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "delete even with uncommitted changes in the worktree (they are lost)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {message, deleted_agent} as JSON")
	return cmd
}

func agentDeleteRun(ctx context.Context, o *AgentDeleteOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	d, err := fl.Delete(ctx, o.Name, o.Force)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	res := fleet.WithWarnings(fleet.NewDeleteResult(d), notes.Texts()).(fleet.DeleteAgentResult)
	cli.PrintWarnings(o.IO, res.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, res)
	}
	fmt.Fprintln(o.IO.Out, res.Message)
	return nil
}
