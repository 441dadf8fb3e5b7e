package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fleet"
)

func init() {
	registerCommand(newCmdAgent)
	registerCommand(newCmdRole)
	registerCommand(newCmdProject)
}

// fleetOf opens the workspace's fleet (the local backend).
func (f *Factory) fleetOf() (*fleet.Fleet, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	return fleet.New(ws, fleet.Options{Now: f.Now}), nil
}

// fleetSource is who gives the fleet a task: an agent when the command runs
// inside one of its runs, else a person.
func (f *Factory) fleetSource() string {
	if f.Getenv != nil && f.Getenv(fleet.EnvAgent) != "" {
		return fleet.SourceAgent
	}
	return fleet.SourceHuman
}

// fleetErr renders a fleet error in the CLI's words: bad input is a usage
// error (exit 2); a refusal that --force overrides says so.
func fleetErr(err error) error {
	var fe *fleet.Error
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	switch {
	case fe.Code == fleet.CodeBadInput:
		if flag := fleetFlags[fe.Field]; flag != "" {
			return &usageError{fmt.Errorf("%s: %w", flag, err)}
		}
		return &usageError{err}
	case fe.Field == "force":
		return fmt.Errorf("%w; or pass --force to delete them with the worktree", err)
	}
	return err
}

// fleetFlags names the flag (or argument) of each fleet input field.
var fleetFlags = map[string]string{
	"name": "NAME", "agent_name": "NAME", "spec": "--spec", "role": "--role", "project": "--project", "cli": "--cli",
	"task_id": "--task", "task_description": "TEXT", "page": "--page", "page_size": "--page-size", "status_filter": "--status",
}

func newCmdAgent(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a fleet of named agents, each in its own git worktree",
		Long: `A fleet of named agents on this machine. Each agent has a role (an agent mode), a
project, a standing objective (its spec) and a git worktree on its own branch
(agent/NAME). Give an idle agent a task with "agent start"; runs are detached
and outlive the command. See docs/fleet.md.`,
		Example: `  agentinfra agent create papi --spec "Keep the API tests green"
  agentinfra agent start papi --task 3f9a2c
  agentinfra agent list --watch
  agentinfra agent history papi`,
	}
	for _, c := range []func(*Factory) *cobra.Command{
		newCmdAgentCreate, newCmdAgentList, newCmdAgentShow, newCmdAgentStart, newCmdAgentStop,
		newCmdAgentHistory, newCmdAgentDelete, newCmdAgentSupervise,
	} {
		cmd.AddCommand(c(f))
	}
	return cmd
}

func newCmdAgentCreate(f *Factory) *cobra.Command {
	var in fleet.CreateInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME --spec TEXT",
		Short: "Create an agent: a worktree on a new branch, then its first run on the spec",
		Long: `Create an agent named NAME (1–20 letters, digits and single hyphens; unique
regardless of case). It gets a git worktree on a new branch agent/NAME from the
project's base branch, outside the repository (../REPO-agents/NAME by default),
runs the configured setup command there, and starts working on its spec at once.`,
		Example: `  agentinfra agent create papi --spec "Keep the API tests green"
  agentinfra agent create sony --role reviewer --cli claude --spec "Review every REVIEW task"
  agentinfra agent create web-1 --project web --spec "Own the storefront" --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			in.Name, in.Source = args[0], f.fleetSource()
			a, err := fl.Create(cmd.Context(), in)
			if err != nil {
				return fleetErr(err)
			}
			res := fleet.NewCreateResult(a)
			if asJSON {
				return writeJSON(f.IO.Out, res)
			}
			fmt.Fprintln(f.IO.Out, res.Message)
			return nil
		},
	}
	cmd.Flags().StringVar(&in.Spec, "spec", "", "the agent's standing objective (required)")
	cmd.Flags().StringVar(&in.Role, "role", "", "its role, an agent mode (default: fleet.role in config, else coder)")
	cmd.Flags().StringVar(&in.Project, "project", "", "the project (default: this repository; see agentinfra project list)")
	cmd.Flags().StringVar(&in.CLI, "cli", "", "agent CLI: gemini, claude or codex (default: fleet.cli in config, else gemini)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {agent, message} as JSON")
	return cmd
}

func newCmdAgentList(f *Factory) *cobra.Command {
	var filter fleet.ListFilter
	var asJSON, watch bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents with their status and current task",
		Example: `  agentinfra agent list
  agentinfra agent list --status idle --json | jq -r '.agents[].name'
  agentinfra agent list --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch && (asJSON || !f.IO.IsTTY) {
				return usageErrorf("--watch redraws a terminal: it needs one, and no --json")
			}
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			for {
				agents, err := fl.List(cmd.Context(), filter)
				if err != nil {
					return fleetErr(err)
				}
				if asJSON {
					return writeJSON(f.IO.Out, fleet.NewListResult(agents))
				}
				if watch {
					fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J")
					fmt.Fprintf(f.IO.Out, "%s  (every 1s; Ctrl-C to quit)\n\n", f.Now().Format("15:04:05"))
				}
				printAgents(f.IO.Out, agents, f.Now())
				if !watch {
					return nil
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		},
	}
	cmd.Flags().StringVar(&filter.Status, "status", "", "only agents with this status (idle, busy, ...)")
	cmd.Flags().StringVar(&filter.Project, "project", "", "only agents of this project")
	cmd.Flags().BoolVar(&watch, "watch", false, "redraw every second (on a terminal)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {agents, total_count} as JSON")
	return cmd
}

func printAgents(w io.Writer, agents []fleet.Agent, now time.Time) {
	if len(agents) == 0 {
		fmt.Fprintln(w, "no agents; create one with: agentinfra agent create NAME --spec TEXT")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tROLE\tPROJECT\tCURRENT TASK")
	for _, a := range agents {
		cur := "-"
		if a.CurrentTask != nil {
			cur = a.CurrentTask.Summary
			if a.CurrentTask.StartedAt != nil {
				cur += " (" + now.Sub(*a.CurrentTask.StartedAt).Round(time.Second).String() + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Status, a.Role, a.Project, cur)
	}
	tw.Flush()
}

func newCmdAgentShow(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one agent: status, current task, worktree, spec",
		Example: `  agentinfra agent show papi
  agentinfra agent show papi --json | jq .agent.status`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			a, err := fl.Show(cmd.Context(), args[0])
			if err != nil {
				return fleetErr(err)
			}
			if asJSON {
				return writeJSON(f.IO.Out, fleet.NewShowResult(a))
			}
			cur := "-"
			if a.CurrentTask != nil {
				cur = a.CurrentTask.ID + ": " + a.CurrentTask.Summary
			}
			rows := [][2]string{{"Name", a.Name}, {"Status", string(a.Status)}, {"Current task", cur}, {"Role", a.Role},
				{"Project", a.Project}, {"CLI", a.CLI}, {"Spec", a.Spec}, {"Worktree", a.Workspace.Path},
				{"Branch", a.Workspace.Branch}, {"Created", a.CreatedAt.Format(time.RFC3339)}, {"Updated", a.UpdatedAt.Format(time.RFC3339)}}
			if a.Error != "" {
				rows = append(rows, [2]string{"Error", a.Error})
			}
			for _, r := range rows {
				fmt.Fprintf(f.IO.Out, "%-14s%s\n", r[0]+":", r[1])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {agent, message} as JSON")
	return cmd
}

func newCmdAgentStart(f *Factory) *cobra.Command {
	var taskID string
	var next, asJSON bool
	cmd := &cobra.Command{
		Use:   "start NAME (TEXT | --task ID | --next)",
		Short: "Give an idle agent a task: free text, a matrix task, or the next ready one",
		Long: `Give an idle agent a task. With --task ID the matrix task is claimed for the agent
(IN_PROGRESS, @NAME added to Agents; refused when another agent holds it) and the
agent gets the standard prompt; when the run ends the task goes to REVIEW, or to
BLOCKED when it failed. --next claims the highest-priority ready task (TODO, every
Deps task DONE). The run is detached: this command returns once it started.`,
		Example: `  agentinfra agent start papi "Add a retry to the fetcher"
  agentinfra agent start papi --task 3f9a2c
  agentinfra agent start sony --next --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			in := fleet.StartInput{Name: args[0], Text: strings.Join(args[1:], " "), TaskID: taskID, Next: next, Source: f.fleetSource()}
			r, err := fl.Start(cmd.Context(), in)
			if err != nil {
				return fleetErr(err)
			}
			res := fleet.NewStartResult(args[0], r)
			if asJSON {
				return writeJSON(f.IO.Out, res)
			}
			fmt.Fprintln(f.IO.Out, res.Message)
			return nil
		},
	}
	cmd.Flags().StringVar(&taskID, "task", "", "a matrix task ID to claim and work on")
	cmd.Flags().BoolVar(&next, "next", false, "claim the highest-priority ready task")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, agent_status, message} as JSON")
	return cmd
}

func newCmdAgentStop(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop the agent's current run (interrupt, terminate, kill); the agent becomes idle",
		Example: `  agentinfra agent stop papi
  agentinfra agent stop papi --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			tr, err := fl.Stop(cmd.Context(), args[0])
			if err != nil {
				return fleetErr(err)
			}
			st := fleet.StatusIdle
			if a, err := fl.Show(cmd.Context(), args[0]); err == nil {
				st = a.Status
			}
			res := fleet.NewStopResult(args[0], tr, st)
			if asJSON {
				return writeJSON(f.IO.Out, res)
			}
			fmt.Fprintln(f.IO.Out, res.Message)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, agent_status, message} as JSON")
	return cmd
}

func newCmdAgentHistory(f *Factory) *cobra.Command {
	var page, size int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "The agent's task runs, newest first, a page at a time",
		Example: `  agentinfra agent history papi
  agentinfra agent history papi --page 2 --page-size 50 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			h, err := fl.History(cmd.Context(), args[0], page, size)
			if err != nil {
				return fleetErr(err)
			}
			if asJSON {
				return writeJSON(f.IO.Out, h)
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATUS\tSOURCE\tCREATED\tTASK\tSUMMARY")
			for _, r := range h.Tasks {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Source, r.CreatedAt.Format(time.RFC3339), orDash(r.TaskID), r.Summary)
			}
			tw.Flush()
			fmt.Fprintf(f.IO.Out, "page %d of %d (%d runs)\n", h.Page, max(h.TotalPages, 1), h.TotalCount)
			return nil
		},
	}
	cmd.Flags().IntVar(&page, "page", 1, "page, from 1")
	cmd.Flags().IntVar(&size, "page-size", fleet.DefaultPageSize, "runs per page, 1–100")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {tasks, total_count, page, page_size, total_pages} as JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newCmdAgentDelete(f *Factory) *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Stop the agent and remove its worktree; the branch and the history are kept",
		Long: `Stop the agent's run, remove its worktree and archive its history under
.agent/fleet/archive/. Its branch (agent/NAME) is kept. A worktree with
uncommitted changes is refused unless --force.`,
		Example: `  agentinfra agent delete papi
  agentinfra agent delete papi --force --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl, err := f.fleetOf()
			if err != nil {
				return err
			}
			d, err := fl.Delete(cmd.Context(), args[0], force)
			if err != nil {
				return fleetErr(err)
			}
			res := fleet.NewDeleteResult(d)
			if asJSON {
				return writeJSON(f.IO.Out, res)
			}
			fmt.Fprintln(f.IO.Out, res.Message)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete even with uncommitted changes in the worktree (they are lost)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {message, deleted_agent} as JSON")
	return cmd
}

// newCmdAgentSupervise is the supervisor of one run, started detached by
// agent start (and by the MCP server); not for people.
func newCmdAgentSupervise(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise NAME RUN",
		Short:  "Run and record one agent run (started by agent start)",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			return fleet.Supervise(cmd.Context(), ws, args[0], args[1], fleet.Options{Now: f.Now})
		},
	}
}
