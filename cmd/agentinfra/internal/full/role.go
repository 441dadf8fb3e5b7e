package full

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
)

func NewCmdRole(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "role",
		Short: "The roles a fleet's agents can be made as",
		Long: `A role is what a fleet agent is made as (agent create --role). On this
machine (the local backend) a role is an agent mode of the agent's project,
.agent/agents/{role}.md, whose text is the agent's system prompt
(agentinfra mode list shows the modes with their model and skills); on
Coder a role is a preset of the project's template.`,
		Example: `  agentinfra role list
  agentinfra agent create papi --spec "Keep the API tests green" --role reviewer`,
	}
	addBackendFlag(cmd, f)
	cmd.AddCommand(NewCmdRoleList(f, nil))
	return cmd
}

// RoleListOptions is what `role list` runs with.
type RoleListOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Project string
	JSON    bool
}

func NewCmdRoleList(f *Factory, runF func(context.Context, *RoleListOptions) error) *cobra.Command {
	o := &RoleListOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the roles a project's agents can take (locally: its agent modes)",
		Example: `  agentinfra role list
  agentinfra role list --json | jq -r '.roles[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return roleListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Project, "project", "", "the project (default: this repository)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {roles} as JSON")
	return cmd
}

func roleListRun(ctx context.Context, o *RoleListOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	roles, err := fl.Roles(ctx, o.Project)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, fleet.RolesResult{Roles: roles})
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDISPLAY NAME\tDESCRIPTION")
	for _, r := range roles {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.DisplayName, r.Description)
	}
	return tw.Flush()
}
