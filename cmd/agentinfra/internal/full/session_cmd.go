package full

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

// SessionOptions is what the session subcommands run with.
type SessionOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)
	Now func() time.Time

	ID     string
	All    bool
	Reason string
	JSON   bool
}

func NewCmdSession(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Supervised sessions: list, show, pause, resume, stop",
		Long: `A session is one supervised run of an agent CLI: its owner, workspace, status
(created, active, paused, terminated, interrupted), mode and progress. Pausing
stops the agent's processes where they are (SIGSTOP) until it is resumed;
stopping ends the run (a pending request is interrupted). A session whose
supervisor died (SIGKILL, OOM, a reboot) is interrupted and resumable:
session resume restarts its run on the agent CLI's own session under a new
supervisor, and the request it was asking is asked again when the CLI asks
again (supervision.resume: auto does it on the next agentinfra command).`,
		Example: `  agentinfra session list
  agentinfra session show 3
  agentinfra session pause 3
  agentinfra session stop 3 --reason "wrong task"`,
	}
	mk := func(use, short, example string, run func(context.Context, *SessionOptions) error, args cobra.PositionalArgs) *cobra.Command {
		o := &SessionOptions{IO: f.IO, Env: f.supervision, Now: f.Now}
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error {
				if len(a) > 0 {
					o.ID = a[0]
				}
				return run(cmd.Context(), o)
			}}
		c.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
		if use == "list" {
			c.Flags().BoolVar(&o.All, "all", false, "include ended sessions")
		}
		if use == "stop ID" || use == "pause ID" {
			c.Flags().StringVar(&o.Reason, "reason", "", "why (kept in the audit log)")
		}
		return c
	}
	cmd.AddCommand(
		mk("list", "Sessions, newest first (live ones; --all for every one)", "  agentinfra session list\n  agentinfra session list --all --json", sessionListRun, cobra.NoArgs),
		mk("show ID", "One session: status, progress, its requests and audit log", "  agentinfra session show 3\n  agentinfra session show 3 --json", sessionShowRun, cobra.ExactArgs(1)),
		mk("pause ID", "Pause an active session (its agent stops where it is)", "  agentinfra session pause 3", sessionMove(supervision.SessionPaused), cobra.ExactArgs(1)),
		mk("resume ID", "Resume a paused session, or restart one whose supervisor died on its CLI's own session",
			"  agentinfra session resume 3\n  agentinfra session resume 3 --json", sessionResumeRun, cobra.ExactArgs(1)),
		mk("stop ID", "Stop a session: its run ends, a pending request is interrupted", "  agentinfra session stop 3 --reason \"wrong task\"", sessionMove(supervision.SessionTerminated), cobra.ExactArgs(1)),
		newCmdSessionWatchdog(f),
		newCmdSessionPurge(f),
		newCmdSessionRunResumed(f),
		newCmdSessionResetDB(f, nil),
	)
	return cmd
}

func sessionListRun(ctx context.Context, o *SessionOptions) error {
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	f := supervision.SessionFilter{}
	if !o.All {
		// Live sessions, and the interrupted ones a resume can restart.
		f.Statuses = append(append([]string{}, supervision.LiveStatuses...), supervision.SessionInterrupted)
	}
	all, err := env.svc.SessionViews(ctx, f)
	if err != nil {
		return err
	}
	ss := []listedSession{}
	for _, s := range all {
		r := supervision.Resumable(s.Session)
		if o.All || s.Live() || r {
			ss = append(ss, listedSession{s, r})
		}
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, ss)
	}
	if len(ss) == 0 {
		fmt.Fprintln(o.IO.Out, "No sessions.")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tMODE\tCLI\tAGENT\tTASK\tOWNER\tLAST TOOL\tUPDATED")
	resumable := 0
	for _, s := range ss {
		cell := func(s string) string { return termsafe.Line(orDash(s)) } // the agent's (the MCP client's) text
		status := sessionStatus(s.SessionView, o.Now())
		if s.Resumable {
			status += " (resumable)"
			resumable++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s ago\n", s.ID, status, s.Mode, cell(s.CLI), cell(onHost(s.Agent, s.Agent, s.Host)), cell(s.TaskID),
			cell(supervision.Handle(s.Owner)), cell(s.LastTool), since(o.Now(), s.UpdatedAt))
	}
	tw.Flush()
	fmt.Fprintf(o.IO.Out, "%d live of max_concurrent_sessions %d\n", countLive(all), env.svc.Config().MaxConcurrentSessions)
	if resumable > 0 {
		fmt.Fprintf(o.IO.Out, "%d interrupted by a supervisor that died: `agentinfra session resume ID` restarts one on its CLI's own session\n", resumable)
	}
	writeHosts(o.IO.Out, env.svc.Hosts(), o.Now())
	return nil
}

// sessionStatus is a session's status as a person reads it: what a live
// session waits for, when it waits ("waiting: request 6, 2m").
func sessionStatus(s supervision.SessionView, now time.Time) string {
	if s.Waiting != nil && s.Status == supervision.SessionActive {
		return s.Waiting.Summary(now)
	}
	return s.Status
}

func countLive(ss []supervision.SessionView) int {
	n := 0
	for _, s := range ss {
		if s.Live() {
			n++
		}
	}
	return n
}

// listedSession is a session as session list shows it: with whether a
// resume can restart its run.
type listedSession struct {
	supervision.SessionView
	Resumable bool `json:"resumable"`
}

func sessionShowRun(ctx context.Context, o *SessionOptions) error {
	id, err := parseID("session", o.ID)
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	s, err := env.svc.Session(ctx, id)
	if err != nil {
		return err
	}
	reqs, err := env.svc.Requests(ctx, id)
	if err != nil {
		return err
	}
	evs, err := env.svc.Audit(ctx, id)
	if err != nil {
		return err
	}
	all, err := env.svc.Waiting(ctx)
	if err != nil {
		return err
	}
	var wait *supervision.Waiting
	if it, ok := all[id]; ok {
		wait = &it
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, struct {
			supervision.Session
			Waiting  *supervision.Waiting     `json:"waiting,omitempty"`
			Requests []supervision.Request    `json:"requests"`
			Audit    []supervision.AuditEvent `json:"audit"`
		}{s, wait, orEmpty(reqs), orEmpty(evs)})
	}
	w := o.IO.Out
	// The texts are the agent's (the MCP client's): shown inert (termsafe).
	line := termsafe.Line
	fmt.Fprintf(w, "Session %d: %s (%s, mode %s)\n", s.ID, s.Status, line(s.CLI), s.Mode)
	fmt.Fprintf(w, "Owner:     %s\nWorkspace: %s\n", line(supervision.Handle(s.Owner)), line(s.Workspace))
	if s.Agent != "" || s.TaskID != "" {
		fmt.Fprintf(w, "Agent:     %s  Task: %s\n", line(orDash(s.Agent)), line(orDash(s.TaskID)))
	}
	fmt.Fprintf(w, "Last tool: %s\nProgress:  %s\n", line(orDash(s.LastTool)), line(orDash(s.Progress)))
	if wait != nil {
		fmt.Fprintf(w, "Waiting:   %s (%s): %s\n", wait.Summary(o.Now()), line(mdtext.Shorten(oneLine(wait.What), 80)), wait.HowToAnswer())
	}
	if s.EndReason != "" {
		fmt.Fprintf(w, "Ended:     %s\n", line(s.EndReason))
	}
	fmt.Fprintf(w, "\nRequests (%d):\n", len(reqs))
	for _, r := range reqs {
		fmt.Fprintf(w, "  %d  %-11s %-8s %s", r.ID, r.Status, r.Risk, line(mdtext.Shorten(oneLine(r.Title), 80)))
		if r.Status != supervision.StatusPending && r.Surface != "" {
			fmt.Fprintf(w, "  (via %s by %s)", r.Surface, line(supervision.Handle(r.DecidedBy)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nAudit log (%d):\n", len(evs))
	for _, e := range evs {
		// The detail is JSON of the agent's text: JSON escapes C0 controls
		// but passes DEL, C1 and bidi characters raw.
		fmt.Fprintf(w, "  %s  %-16s %-10s %s %s\n", e.At.Local().Format("15:04:05"), e.Action, e.Surface, line(supervision.Handle(e.Actor)), line(mdtext.Shorten(string(e.Detail), 100)))
	}
	return nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sessionMove(to string) func(context.Context, *SessionOptions) error {
	return func(ctx context.Context, o *SessionOptions) error {
		id, err := parseID("session", o.ID)
		if err != nil {
			return err
		}
		env, err := o.Env(ctx)
		if err != nil {
			return err
		}
		defer env.Close()
		s, err := env.svc.MoveSession(ctx, env.user, id, to, o.Reason)
		if err != nil {
			return err
		}
		if o.JSON {
			return cli.WriteJSON(o.IO.Out, s)
		}
		fmt.Fprintf(o.IO.Out, "Session %d is %s.\n", s.ID, s.Status)
		return nil
	}
}
