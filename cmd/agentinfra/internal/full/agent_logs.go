package full

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/termsafe"
)

// AgentLogsOptions is what `agent logs` runs with.
type AgentLogsOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Name   string
	Run    string
	Tail   int
	Follow bool
	JSON   bool
}

func NewCmdAgentLogs(f *Factory, runF func(context.Context, *AgentLogsOptions) error) *cobra.Command {
	o := &AgentLogsOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "What the agent's CLI printed during a run: messages, tool calls and their results, errors",
		Long: `Show the log of one of the agent's runs: every event its agent CLI printed
(messages, tool calls and their results, errors), between the run's start and
its end. Without --run, the current run, else the last one; agent history
lists the runs. --follow streams a live run until it ends (Ctrl-C stops
following, not the run). With --json, the log is {run, items, total_count,
live}; with --follow --json, one item per line as it comes.`,
		Example: `  agentinfra agent logs papi
  agentinfra agent logs papi --follow
  agentinfra agent logs papi --run papi-3 --tail 20
  agentinfra agent logs papi --follow --json | jq -r 'select(.kind=="tool_use") | .text'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if o.Tail < 0 {
				return cli.UsageErrorf("--tail %d: give 0 (all) or more", o.Tail)
			}
			if o.Follow && o.Tail > 0 {
				return cli.UsageErrorf("--tail and --follow: --follow shows the whole log, then what comes")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentLogsRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Run, "run", "", "the run (an ID from agent history; default: the current run, else the last)")
	cmd.Flags().IntVar(&o.Tail, "tail", 0, "only the last N items (0 = all)")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "stream a live run until it ends")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {run, items, total_count, live} as JSON (with --follow: one item per line)")
	return cmd
}

func agentLogsRun(ctx context.Context, o *AgentLogsOptions) error {
	b, err := o.Fleet()
	if err != nil {
		return err
	}
	lr, ok := b.(fleet.LogReader)
	if !ok {
		return fleet.NoLogs("coder")
	}
	ctx, notes := withFleetNotices(ctx)
	if !o.Follow {
		res, err := lr.Logs(ctx, o.Name, o.Run, o.Tail)
		if err != nil {
			return fleetFailed(o.IO, notes, err)
		}
		res = fleet.WithWarnings(res, notes.Texts()).(fleet.LogsResult)
		cli.PrintWarnings(o.IO, res.Warnings)
		if o.JSON {
			return cli.WriteJSON(o.IO.Out, res)
		}
		printRunHeader(o.IO.Out, res.Run, res.Live)
		for _, it := range res.Items {
			printLogItem(o.IO.Out, it)
		}
		if len(res.Items) == 0 {
			fmt.Fprintln(o.IO.Out, "(no log: the run has not started, or ran before agentinfra kept logs)")
		}
		return nil
	}
	enc := json.NewEncoder(o.IO.Out)
	_, err = lr.FollowLogs(ctx, o.Name, o.Run, func(it events.RunItem) error {
		if o.JSON {
			return enc.Encode(it)
		}
		printLogItem(o.IO.Out, it)
		return nil
	})
	cli.PrintWarnings(o.IO, notes.Texts())
	if ctx.Err() != nil {
		return nil // Ctrl-C ends the follow, not the run
	}
	return err
}

func printRunHeader(w io.Writer, r fleet.TaskRun, live bool) {
	state := r.Status
	if live {
		state += ", live"
	}
	fmt.Fprintf(w, "run %s of %s (%s): %s\n", r.ID, r.AgentName, state, termsafe.Line(r.Summary))
}

// printLogItem prints one item as "15:04:05 kind[ tool]: text", the text's
// further lines indented.
func printLogItem(w io.Writer, it events.RunItem) {
	head := it.Kind
	switch it.Kind {
	case "run_started":
		head = "▶ run started"
	case "run_ended":
		head = "■ run ended"
	}
	if it.Tool != "" {
		head += " " + it.Tool
	}
	text := strings.TrimRight(it.Text, "\n")
	if it.SessionID != "" {
		text = strings.TrimSpace(text + " (session " + it.SessionID + ")")
	}
	// The tool's name and the text are the agent's: shown inert (termsafe).
	line := it.Time.Local().Format("15:04:05") + " " + termsafe.Line(head)
	if text != "" {
		line += ": " + strings.ReplaceAll(termsafe.Text(text), "\n", "\n    ")
	}
	fmt.Fprintln(w, line)
}
