package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/backends"
)

// fleetOf opens the workspace's fleet on the backend that --backend or
// .agent/config.yaml names (local by default).
func (f *Factory) fleetOf() (fleet.Backend, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	b, err := backends.Open(ws, backends.Options{Name: f.Backend, Fleet: fleet.Options{Now: f.Now}, Getenv: f.Getenv})
	return b, fleetErr(err)
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

// fleetErr renders a fleet error in the CLI's words: bad input is a usage
// error (exit 2); a refusal that --force overrides says so.
func fleetErr(err error) error {
	var fe *fleet.Error
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	switch {
	case fe.Code == fleet.CodeBadInput:
		if flag := fleetFlags[fe.Field]; flag != "" {
			return &usageError{fmt.Errorf("%s: %w", flag, err)}
		}
		return &usageError{err}
	case fe.Field == "force":
		return fmt.Errorf("%w; or pass --force to delete them with the worktree", err)
	}
	return err
}

// withFleetNotices returns a context whose fleet calls collect what they
// did about a killed command's leftovers (a creation rolled back, a claim
// given back, a torn history line set aside) and the records they could
// not read: every agent command prints them as warnings on stderr and puts
// them in its --json result.
func withFleetNotices(ctx context.Context) (context.Context, *fleet.Notices) {
	return fleet.WithNotices(ctx)
}

// fleetFailed prints the notices of a fleet call that failed, then
// returns its error as the CLI shows it.
func fleetFailed(ios *IOStreams, n *fleet.Notices, err error) error {
	printWarnings(ios, n.Texts())
	return fleetErr(err)
}

// fleetFlags names the flag (or argument) of each fleet input field.
var fleetFlags = map[string]string{
	"name": "NAME", "agent_name": "NAME", "spec": "--spec", "role": "--role", "project": "--project", "cli": "--cli",
	"task_id": "--task", "task_description": "TEXT", "run": "--run", "tail": "--tail", "page": "--page", "page_size": "--page-size", "status_filter": "--status", "backend": "--backend",
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
		NewCmdAgentSupervise(f),
	)
	return cmd
}
