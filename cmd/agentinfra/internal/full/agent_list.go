package full

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// AgentListOptions is what `agent list` runs with.
type AgentListOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)
	Now   func() time.Time

	Filter     fleet.ListFilter
	Watch      bool
	NoMetadata bool
	JSON       bool
}

func NewCmdAgentList(f *Factory, runF func(context.Context, *AgentListOptions) error) *cobra.Command {
	o := &AgentListOptions{IO: f.IO, Fleet: f.fleetOf, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents with their status, current task and workspace metadata",
		Long: `List the agents with their status and current task, and a column for each
workspace metadata field marked include_in_list in the agent's Taskfile
(docs/fleet.md); --no-metadata skips running those tasks.

On a terminal it is an aligned table with a header. Piped, as task list, it is one
tab-separated line per agent and no header: name, status, role, project, current
task, then the listed metadata fields (--json names them).`,
		Example: `  agentinfra agent list
  agentinfra agent list --status idle --json | jq -r '.agents[].name'
  agentinfra agent list --no-metadata --watch
  agentinfra agent list --status idle | cut -f1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Watch && (o.JSON || !o.IO.IsTTY) {
				return cli.UsageErrorf("--watch redraws a terminal: it needs one, and no --json")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Filter.Status, "status", "", "only agents with this status (idle, busy, waiting, ...)")
	cmd.Flags().StringVar(&o.Filter.Project, "project", "", "only agents of this project")
	cmd.Flags().BoolVar(&o.Watch, "watch", false, "redraw on every change of the fleet, and every second (on a terminal)")
	cmd.Flags().BoolVar(&o.NoMetadata, "no-metadata", false, "skip the workspace metadata (its Taskfile tasks are not run)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {agents, total_count} as JSON")
	return cmd
}

func agentListRun(ctx context.Context, o *AgentListOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	// --watch redraws when the fleet changes (the bus, fed by a watcher of
	// the fleet's files: supervisors are other processes), and every second
	// for the run times.
	var changed <-chan struct{}
	drain := func() {}
	if o.Watch {
		bus := events.Default()
		sub := bus.Subscribe(events.Filter{Kinds: []events.Kind{events.AgentCreated, events.AgentDeleted, events.AgentChanged,
			events.RunStarted, events.RunEnded}}, 64)
		defer sub.Close()
		changed = sub.Ready()
		if w, ok := fl.(fleet.Watcher); ok {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go w.Watch(wctx, bus, time.Second)
		}
		drain = func() {
			time.Sleep(30 * time.Millisecond) // let a burst of changes land
			for {
				if _, ok := sub.TryNext(); !ok {
					return
				}
			}
		}
	}
	for {
		lctx, notes := withFleetNotices(ctx)
		agents, err := fl.List(lctx, o.Filter)
		if err != nil {
			return fleetFailed(o.IO, notes, err)
		}
		if !o.NoMetadata {
			fl.WithMetadata(ctx, agents, metadata.ListFields)
		}
		res := fleet.WithWarnings(fleet.NewListResult(agents), notes.Texts()).(fleet.ListResult)
		// Never less data with exit code 0: an agent whose record cannot
		// be read is left out, named on stderr, and the list exits 1.
		var partial error
		if n := len(notes.Unreadable()); n > 0 {
			partial = &cli.ExitError{Code: 1}
		}
		if o.JSON {
			if err := cli.WriteJSON(o.IO.Out, res); err != nil {
				return err
			}
			if partial != nil {
				// With --json, stderr is one JSON error, the warnings in it.
				n := len(notes.Unreadable())
				return cli.WithWarnings(&cli.ExitError{Code: 1, Msg: fmt.Sprintf("%d %s could not be read; the agents listed are the others",
					n, cli.Plural(n, "agent record", "agent records"))}, res.Warnings)
			}
			cli.PrintWarnings(o.IO, res.Warnings)
			return nil
		}
		if o.Watch {
			fmt.Fprint(o.IO.Out, "\x1b[H\x1b[2J")
			fmt.Fprintf(o.IO.Out, "%s  (live: on every change, and every 1s; Ctrl-C to quit)\n\n", o.Now().Format("15:04:05"))
		}
		if o.IO.IsTTY {
			printAgents(o.IO.Out, agents, o.Now())
		} else {
			printAgentsTSV(o.IO.Out, o.IO.ErrOut, agents, o.Now())
		}
		// After the table, so that --watch shows them under each redraw.
		cli.PrintWarnings(o.IO, res.Warnings)
		if !o.Watch {
			return partial
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			drain()
		case <-time.After(time.Second):
		}
	}
}

// currentTask is an agent's CURRENT TASK cell: the run's summary and how
// long it has run, "-" when idle.
func currentTask(a fleet.Agent, now time.Time) string {
	if a.CurrentRun == nil {
		return "-"
	}
	cur := a.CurrentRun.Summary
	if a.CurrentRun.StartedAt != nil {
		cur += " (" + now.Sub(*a.CurrentRun.StartedAt).Round(time.Second).String() + ")"
	}
	return cur
}

// agentStatus is an agent's STATUS cell: what a waiting agent waits for
// ("waiting: request 6, 2m").
func agentStatus(a fleet.Agent, now time.Time) string {
	if a.Waiting != nil {
		return a.Waiting.Summary(now)
	}
	return string(a.Status)
}

// printAgentsTSV prints, piped, one tab-separated line per agent and no
// header, as task list does: name, status, role, project, current task,
// then the listed metadata fields in order (--json names them).
func printAgentsTSV(w, errOut io.Writer, agents []fleet.Agent, now time.Time) {
	if len(agents) == 0 {
		fmt.Fprintln(errOut, "no agents; create one with: agentinfra agent create NAME --spec TEXT")
		return
	}
	clean := strings.NewReplacer("\t", " ", "\n", " ")
	cols := listedMetadata(agents)
	for _, a := range agents {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s%s\n", a.Name, a.Status, a.Role, a.Project, clean.Replace(currentTask(a, now)), metadataCells(a, cols))
	}
}

func printAgents(w io.Writer, agents []fleet.Agent, now time.Time) {
	if len(agents) == 0 {
		fmt.Fprintln(w, "no agents; create one with: agentinfra agent create NAME --spec TEXT")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := listedMetadata(agents)
	fmt.Fprintln(tw, "NAME\tSTATUS\tROLE\tPROJECT\tCURRENT TASK"+metadataHeader(cols))
	for _, a := range agents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\n", a.Name, agentStatus(a, now), a.Role, a.Project, termsafe.Line(currentTask(a, now)), metadataCells(a, cols))
	}
	tw.Flush()
}
