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
		Short: "The roles agents can take (agent modes)",
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
		Short: "List the roles: the agent modes in .agent/agents/",
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
