package full

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

// AgentDeliverOptions is what `agent deliver` runs with.
type AgentDeliverOptions struct {
	IO        *cli.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Fleet     func() (fleet.Backend, error)

	JSON bool
}

func NewCmdAgentDeliver(f *Factory, runF func(context.Context, *AgentDeliverOptions) error) *cobra.Command {
	o := &AgentDeliverOptions{IO: f.IO, Workspace: f.Workspace, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "deliver",
		Short: "Start idle agents on the changes that wait for them (sent back with comments, to review)",
		Long: `deliver starts each idle agent on the oldest change that waits for it: a change sent
back with review changes (its agent, with the comments as its prompt, its CLI session
going on), or, with review.reviewer in .agent/config.yaml, a change in REVIEW for the
reviewer agent. A busy agent is left as it is: what waits for it is listed.

The end of every fleet run does this, and review changes does it for the agent it
sends a change back to; deliver is for when neither happened (a run's supervisor
was killed). The files are the queue: see docs/review.md.`,
		Example: `  agentinfra agent deliver
  agentinfra agent deliver --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentDeliverRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print [{agent, task, kind, run, waiting}] as JSON")
	return cmd
}

func agentDeliverRun(ctx context.Context, o *AgentDeliverOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ds := review.NewService(ws, review.Options{Fleet: fl}).DeliverAll(ctx)
	if ds == nil {
		ds = []review.Delivery{}
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, ds)
	}
	if len(ds) == 0 {
		fmt.Fprintln(o.IO.Out, "nothing waits for an agent")
	}
	for _, d := range ds {
		if d.Run != "" {
			fmt.Fprintf(o.IO.Out, "@%s started on task %s (%s) in run %s\n", termsafe.Line(d.Agent), d.Task, d.Kind, d.Run)
		} else {
			fmt.Fprintf(o.IO.Out, "task %s (%s) waits for @%s: %s\n", d.Task, d.Kind, termsafe.Line(d.Agent), termsafe.Line(d.Waiting))
		}
	}
	return nil
}
