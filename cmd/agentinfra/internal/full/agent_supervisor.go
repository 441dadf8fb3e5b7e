package full

import (
	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet/local"
)

// NewCmdAgentRunSupervisor is the supervisor of one run, started detached by
// agent start (and by the MCP server); not for people. supervise is its
// former name (a start by an agentinfra from before the name changed).
func NewCmdAgentRunSupervisor(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "run-supervisor NAME RUN",
		Aliases: []string{"supervise"},
		Short:   "Run and record one agent run (started by agent start)",
		Hidden:  true,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			return local.RunSupervisor(cmd.Context(), ws, args[0], args[1], local.Options{Now: f.Now})
		},
	}
}
