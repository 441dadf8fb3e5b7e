package full

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/backends"
	"github.com/agentinfra/agentinfra/fleet/local"
)

// fleetOf opens the workspace's fleet on the backend that --backend or
// .agent/config.yaml names (local by default).
func (f *Factory) fleetOf() (fleet.Backend, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	f.fleetAutoResume(context.Background(), ws)
	return backends.Open(ws, backends.Options{Name: f.Backend, Fleet: local.Options{Now: f.Now}, Getenv: f.Getenv})
}

// addBackendFlag gives a fleet command group the --backend flag.
func addBackendFlag(cmd *cobra.Command, f *Factory) {
	cmd.PersistentFlags().StringVar(&f.Backend, "backend", "",
		"where agents run: local or coder (default: fleet.backend in .agent/config.yaml, else local)")
}

// fleetSource is who gives the fleet a task: an agent when the command runs
// inside one of its runs, else a person.
func (f *Factory) fleetSource() string {
	if f.Getenv != nil && f.Getenv(fleet.EnvAgent) != "" {
		return fleet.SourceAgent
	}
	return fleet.SourceHuman
}

// withFleetNotices returns a context whose fleet calls collect what they
// did about a killed command's leftovers (a creation rolled back, a claim
// given back, a torn history line set aside) and the records they could
// not read: every agent command prints them as warnings on stderr and puts
// them in its --json result.
func withFleetNotices(ctx context.Context) (context.Context, *fleet.Notices) {
	return fleet.WithNotices(ctx)
}

// fleetFailed is the error of a fleet call that failed, carrying the
// call's notices: the CLI prints them as warnings before the error, or,
// with --json, puts them in the JSON error's "warnings".
func fleetFailed(_ *cli.IOStreams, n *fleet.Notices, err error) error {
	return cli.WithWarnings(err, n.Texts())
}

func NewCmdAgent(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a fleet of named agents, each in its own git worktree",
		Long: `A fleet of named agents on this machine. Each agent has a role (an agent mode), a
project, a standing objective (its spec) and a git worktree on its own branch
(agent/NAME). Give an idle agent a task with "agent start"; runs are detached
and outlive the command. See docs/fleet.md.`,
		Example: `  agentinfra agent create papi --spec "Keep the API tests green"
  agentinfra agent start papi --task 3f9a2c
  agentinfra agent list --watch
  agentinfra agent history papi
  agentinfra agent logs papi --follow`,
	}
	addBackendFlag(cmd, f)
	cmd.AddCommand(
		NewCmdAgentCreate(f, nil),
		NewCmdAgentList(f, nil),
		NewCmdAgentShow(f, nil),
		NewCmdAgentStart(f, nil),
		NewCmdAgentStop(f, nil),
		NewCmdAgentHistory(f, nil),
		NewCmdAgentLogs(f, nil),
		NewCmdAgentDelete(f, nil),
		NewCmdAgentDeliver(f, nil),
		NewCmdAgentRunSupervisor(f),
		NewCmdAgentHost(f, nil),
	)
	return cmd
}

// completeAgents completes the first argument with the fleet's agent names.
func completeAgents(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cli.NoFiles
		}
		fl, err := f.fleetOf()
		if err != nil {
			return nil, cli.NoFiles
		}
		agents, err := fl.List(cmd.Context(), fleet.ListFilter{})
		if err != nil {
			return nil, cli.NoFiles
		}
		var out []cobra.Completion
		for _, a := range agents {
			if strings.HasPrefix(a.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(a.Name, string(a.Status)+", "+a.Role))
			}
		}
		return out, cli.NoFiles
	}
}
