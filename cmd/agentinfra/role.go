package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet"
)

func newCmdRole(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "role",
		Short: "The roles agents can take (agent modes)",
	}
	var project string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the roles: the agent modes in .agent/agents/",
		Example: `  agentinfra role list
  agentinfra role list --json | jq -r '.roles[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			roles, err := fl.Roles(cmd.Context(), project)
			if err != nil {
				return fleetErr(err)
			}
			if asJSON {
				return writeJSON(f.IO.Out, fleet.RolesResult{Roles: roles})
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDISPLAY NAME\tDESCRIPTION")
			for _, r := range roles {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.DisplayName, r.Description)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project (default: this repository)")
	list.Flags().BoolVar(&asJSON, "json", false, "print {roles} as JSON")
	cmd.AddCommand(list)
	return cmd
}
