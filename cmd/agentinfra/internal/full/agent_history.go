package full

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// AgentHistoryOptions is what `agent history` runs with.
type AgentHistoryOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Name     string
	Page     int
	PageSize int
	JSON     bool
}

func NewCmdAgentHistory(f *Factory, runF func(context.Context, *AgentHistoryOptions) error) *cobra.Command {
	o := &AgentHistoryOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "The agent's task runs, newest first, a page at a time",
		Example: `  agentinfra agent history papi
  agentinfra agent history papi --page 2 --page-size 50 --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentHistoryRun(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.Page, "page", 1, "page, from 1")
	cmd.Flags().IntVar(&o.PageSize, "page-size", fleet.DefaultPageSize, "runs per page, 1–100")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {tasks, total_count, page, page_size, total_pages} as JSON")
	return cmd
}

func agentHistoryRun(ctx context.Context, o *AgentHistoryOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	h, err := fl.History(ctx, o.Name, o.Page, o.PageSize)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	h = fleet.WithWarnings(h, notes.Texts()).(fleet.HistoryPage)
	cli.PrintWarnings(o.IO, h.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, h)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tSOURCE\tCREATED\tTASK\tSUMMARY")
	for _, r := range h.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Source, r.CreatedAt.Format(time.RFC3339), orDash(r.TaskID), termsafe.Line(r.Summary))
		if r.Status == fleet.RunFailed || r.Status == fleet.RunStopped {
			// Why, under the summary: who stopped it, or what the CLI said.
			fmt.Fprintf(tw, "\t\t\t\t\t└ %s\n", termsafe.Line(r.ExitReason))
		}
	}
	tw.Flush()
	fmt.Fprintf(o.IO.Out, "page %d of %d (%d runs)\n", h.Page, max(h.TotalPages, 1), h.TotalCount)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
