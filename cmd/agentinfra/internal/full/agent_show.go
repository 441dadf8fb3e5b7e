package full

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// AgentShowOptions is what `agent show` runs with.
type AgentShowOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Name string
	JSON bool
}

func NewCmdAgentShow(f *Factory, runF func(context.Context, *AgentShowOptions) error) *cobra.Command {
	o := &AgentShowOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one agent: status, current task, worktree, spec, workspace metadata",
		Example: `  agentinfra agent show papi
  agentinfra agent show papi --json | jq .agent.status`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentShowRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {agent, message} as JSON")
	return cmd
}

func agentShowRun(ctx context.Context, o *AgentShowOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	a, err := fl.Show(ctx, o.Name)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	a.Warnings = append(notes.Texts(), a.Warnings...)
	as := []fleet.Agent{a}
	fl.WithMetadata(ctx, as, metadata.AllFields)
	a = as[0]
	cli.PrintWarnings(o.IO, a.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, fleet.NewShowResult(a))
	}
	cur := "-"
	if a.CurrentRun != nil {
		cur = a.CurrentRun.ID + ": " + a.CurrentRun.Summary
	}
	rows := [][2]string{{"Name", a.Name}, {"Status", string(a.Status)}, {"Current task", cur}, {"Role", a.Role},
		{"Project", a.Project}, {"CLI", a.CLI}, {"Spec", a.Spec}}
	if a.Workspace.Branch != "" {
		rows = append(rows, [2]string{"Worktree", a.Workspace.Path}, [2]string{"Branch", a.Workspace.Branch})
	} else { // a remote workspace (Coder): its dashboard page
		rows = append(rows, [2]string{"Workspace", a.Workspace.Path})
	}
	rows = append(rows, [2]string{"Created", a.CreatedAt.Format(time.RFC3339)}, [2]string{"Updated", a.UpdatedAt.Format(time.RFC3339)})
	if a.Error != "" {
		rows = append(rows, [2]string{"Error", a.Error})
	}
	if w := a.Waiting; w != nil {
		rows = append(rows, [2]string{"Waiting", fmt.Sprintf("%s (%s): %s", w.Summary(time.Now()), oneLine(w.What), w.HowToAnswer())})
	}
	for _, r := range rows {
		fmt.Fprintf(o.IO.Out, "%-14s%s\n", r[0]+":", termsafe.Line(r[1])) // the summary and the error are the agent's
	}
	printMetadata(o.IO.Out, a)
	return nil
}
