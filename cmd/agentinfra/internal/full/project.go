package full

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
)

func NewCmdProject(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "The projects agents work in (this repository and those in .agent/config.yaml)",
		Example: `  agentinfra project list
  agentinfra agent create papi --spec "Fix the flaky tests" --project api`,
	}
	addBackendFlag(cmd, f)
	cmd.AddCommand(NewCmdProjectList(f, nil))
	return cmd
}

// ProjectListOptions is what `project list` runs with.
type ProjectListOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	JSON bool
}

func NewCmdProjectList(f *Factory, runF func(context.Context, *ProjectListOptions) error) *cobra.Command {
	o := &ProjectListOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the projects",
		Example: `  agentinfra project list
  agentinfra project list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return projectListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {projects} as JSON")
	return cmd
}

func projectListRun(ctx context.Context, o *ProjectListOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ps, err := fl.Projects(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, fleet.ProjectsResult{Projects: ps})
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBACKEND\tPATH\tBASE\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Backend, p.Path, orDash(p.BaseBranch), p.Description)
	}
	return tw.Flush()
}
