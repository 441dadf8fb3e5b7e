package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet"
)

func newCmdProject(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "The projects agents work in (this repository and those in .agent/config.yaml)",
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the projects",
		Example: `  agentinfra project list
  agentinfra project list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			ps, err := fl.Projects()
			if err != nil {
				return fleetErr(err)
			}
			if asJSON {
				return writeJSON(f.IO.Out, fleet.ProjectsResult{Projects: ps})
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tBACKEND\tPATH\tBASE\tDESCRIPTION")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Backend, p.Path, orDash(p.BaseBranch), p.Description)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print {projects} as JSON")
	cmd.AddCommand(list)
	return cmd
}
