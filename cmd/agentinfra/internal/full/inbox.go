package full

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// InboxOptions is what `inbox` runs with.
type InboxOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)
	Now func() time.Time

	Watch bool
	Quiet bool
	JSON  bool
	// Limit is the page size (0: every request); After the cursor (the
	// last request ID of the page before).
	Limit int
	After int64
}

func NewCmdInbox(f *Factory, runF func(context.Context, *InboxOptions) error) *cobra.Command {
	o := &InboxOptions{IO: f.IO, Env: f.supervision, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "What supervised sessions wait for: approval requests, continuation prompts, stall alerts",
		Long: `Lists the approval requests that wait for a person, across the workspace's
supervised sessions, oldest first: what the agent asked (command, file, URL),
its risk, the session and agent, and when it expires — this machine's and
those of the supervised agents' hosts on Coder (an item of a host says its
name; a host that cannot be reached is named with since when). Decide with
'agentinfra approve ID' or 'agentinfra reject ID --reason TEXT'. Below them:
the continuation prompts (p4: a turn ended short, with a question or on an
error) and the stall alerts (s2: an agent went silent), answered with
'agentinfra answer'.

The requests are listed a page at a time, in the order of their IDs: 50
(--limit N; 0 lists them all). Below a page that is not the last: how many
more wait and the command that lists the next page ('--after ID', the last
ID shown). The prompts and alerts are on the first page. With --json the
array ends with {"type": "more", "more": N, "next": ID, "command": ...}
when more wait.

--watch keeps the list on screen and updates it as requests come and go (from
any process); with --json it prints one JSON array per change. It rings the
terminal's bell (on stderr) each time something new starts waiting — a request,
a prompt or a stall alert; --quiet keeps it silent.`,
		Example: `  agentinfra inbox
  agentinfra inbox --watch
  agentinfra inbox --json
  agentinfra inbox --after 50
  agentinfra inbox --limit 0
  agentinfra inbox show 12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Limit < 0 || o.After < 0 {
				return agenterr.Invalidf("limit", "--limit and --after take a number of 0 or more")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return inboxRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Watch, "watch", false, "keep watching and update the list on every change")
	cmd.Flags().BoolVar(&o.Quiet, "quiet", false, "with --watch: no bell when something new waits")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the requests as a JSON array (one per change with --watch)")
	cmd.Flags().IntVar(&o.Limit, "limit", supervision.InboxPageSize, "list at most N requests (0: all of them)")
	cmd.Flags().Int64Var(&o.After, "after", 0, "list the requests after request ID (the next page)")
	cmd.AddCommand(NewCmdInboxShow(f, nil))
	return cmd
}

func inboxRun(ctx context.Context, o *InboxOptions) error {
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	warnStorageFailures(o.IO, env.ws, o.Now())
	var changes <-chan struct{}
	if o.Watch {
		if changes, err = env.svc.Changes(ctx); err != nil {
			return err
		}
	}
	var seen map[string]bool // what waited at the last listing (nil before the first)
	for {
		all, err := env.svc.Inbox(ctx)
		if err != nil {
			return err
		}
		now := waitingRefs(all)
		in := all.Page(o.After, o.Limit)
		if seen != nil && !o.Quiet {
			for ref := range now {
				if !seen[ref] {
					fmt.Fprint(o.IO.ErrOut, "\a") // something new waits: the bell, once per listing
					break
				}
			}
		}
		seen = now
		switch {
		case o.JSON:
			items, err := inboxItems(in, o.Limit)
			if err != nil {
				return err
			}
			if err := cli.WriteJSON(o.IO.Out, items); err != nil {
				return err
			}
		default:
			if o.Watch && o.IO.IsTTY {
				fmt.Fprint(o.IO.Out, "\033[H\033[2J") // a fresh screen each time
			}
			if o.Watch {
				fmt.Fprintf(o.IO.Out, "%s — %d pending (Ctrl-C to stop)\n", o.Now().Format("15:04:05"), in.Total)
			}
			writeInbox(o.IO.Out, in.Requests, o.Now(), o.IO.Width)
			if next := in.NextCommand(o.Limit); next != "" {
				fmt.Fprintf(o.IO.Out, "… %d more pending request(s): %s\n", in.More, next)
			}
			writeWaiting(o.IO.Out, in.Prompts, in.Alerts, o.Now())
			writeHosts(o.IO.Out, in.Hosts, o.Now())
		}
		if !o.Watch {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changes:
			if !ok {
				return nil
			}
		}
	}
}

// waitingRefs names what waits: requests by ID, prompts p4, alerts s2.
func waitingRefs(in supervision.Inbox) map[string]bool {
	refs := map[string]bool{}
	for _, r := range in.Requests {
		refs[fmt.Sprint(r.ID)] = true
	}
	for _, p := range in.Prompts {
		refs[fmt.Sprintf("p%d", p.ID)] = true
	}
	for _, a := range in.Alerts {
		refs[fmt.Sprintf("s%d", a.ID)] = true
	}
	return refs
}

func writeInbox(w io.Writer, pending []supervision.PendingView, now time.Time, width int) {
	if len(pending) == 0 {
		fmt.Fprintln(w, "No pending requests.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRISK\tSESSION\tAGENT\tOWNER\tAGE\tEXPIRES\tREQUEST")
	limit := 80
	if width > 60 {
		limit = max(width-60, 30)
	}
	for _, p := range pending {
		agent := agentCell(p.Agent, p.CLI, p.Host)
		if p.TaskID != "" {
			agent += " " + p.TaskID
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Risk, p.SessionID, termsafe.Line(agent), termsafe.Line(supervision.Handle(p.Owner)),
			since(now, p.CreatedAt), expiry(now, p.ExpiresAt), termsafe.Line(mdtext.Shorten(oneLine(p.Title), limit)))
	}
	tw.Flush()
}

// inboxItems is the JSON of a page of the inbox: the approval requests as
// before (each now with "type": "approval"), then the continuation prompts
// ("type": "prompt", "ref": "p4") and the active stall alerts ("type":
// "alert", "ref": "s2"), and last, when more requests wait, "type":
// "more" with their count, the next page's cursor and command (an item
// of the array, as "unreachable" is: the array stays what it was).
func inboxItems(in supervision.InboxPage, limit int) ([]map[string]any, error) {
	items := []map[string]any{}
	add := func(v any, typ, ref string) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		m := map[string]any{}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		m["type"] = typ
		if ref != "" {
			m["ref"] = ref
		}
		items = append(items, m)
		return nil
	}
	for _, p := range in.Requests {
		if err := add(p, "approval", ""); err != nil {
			return nil, err
		}
	}
	for _, p := range in.Prompts {
		if err := add(p, "prompt", fmt.Sprintf("p%d", p.ID)); err != nil {
			return nil, err
		}
	}
	for _, a := range in.Alerts {
		if err := add(a, "alert", fmt.Sprintf("s%d", a.ID)); err != nil {
			return nil, err
		}
	}
	for _, h := range in.Hosts {
		if h.Reachable {
			continue
		}
		// A host that cannot be reached: its items are not listed.
		if err := add(h, "unreachable", ""); err != nil {
			return nil, err
		}
	}
	if in.More > 0 {
		items = append(items, map[string]any{"type": "more", "more": in.More, "next": in.Next, "command": in.NextCommand(limit)})
	}
	return items, nil
}

// agentCell names an item's agent: its name and CLI, and the host it runs
// on when it is another machine's (unless the agent is named after it).
func agentCell(agent, cli, host string) string {
	out := cli
	if agent != "" {
		out = agent + " (" + cli + ")"
	}
	return onHost(out, agent, host)
}

// onHost adds " on HOST" to cell when the item is on another machine
// whose name is not its agent's.
func onHost(cell, agent, host string) string {
	if host != "" && host != agent {
		return cell + " on " + host
	}
	return cell
}

// writeHosts says which hosts could not be reached, since when: their
// items are not listed (they are not lost: they come back with the host).
func writeHosts(w io.Writer, hosts []supervision.HostState, now time.Time) {
	for _, h := range hosts {
		if h.Reachable {
			continue
		}
		fmt.Fprintf(w, "\nHost %s cannot be reached since %s (%s ago): %s; its items are not shown.\n", termsafe.Line(h.Name),
			h.DownSince.Local().Format(time.DateTime), since(now, h.DownSince), termsafe.Line(h.Error))
	}
}

// writeWaiting lists the continuation prompts and stall alerts.
func writeWaiting(w io.Writer, prompts []supervision.PromptView, alerts []supervision.AlertView, now time.Time) {
	if len(prompts) > 0 {
		fmt.Fprintln(w, "\nContinuation prompts (agentinfra answer pID continue|refine TEXT|stop):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tSESSION\tAGENT\tOWNER\tAGE\tEXPIRES\tTEXT")
		for _, p := range prompts {
			agent := agentCell(p.Agent, p.CLI, p.Host)
			fmt.Fprintf(tw, "p%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Kind, p.SessionID, termsafe.Line(agent), termsafe.Line(supervision.Handle(p.Owner)),
				since(now, p.CreatedAt), expiry(now, p.ExpiresAt), termsafe.Line(mdtext.Shorten(oneLine(p.Text), 60)))
		}
		tw.Flush()
	}
	if len(alerts) > 0 {
		fmt.Fprintln(w, "\nStall alerts (agentinfra answer sID nudge [TEXT]|dismiss|stop):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tNUDGES\tSESSION\tAGENT\tOWNER\tSINCE\tLAST TOOL")
		for _, a := range alerts {
			agent := agentCell(a.Agent, a.CLI, a.Host)
			fmt.Fprintf(tw, "s%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Nudges, a.SessionID, termsafe.Line(agent), termsafe.Line(supervision.Handle(a.Owner)),
				since(now, a.RaisedAt), termsafe.Line(orDash(a.LastTool)))
		}
		tw.Flush()
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func since(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() }

func expiry(now time.Time, t *time.Time) string {
	if t == nil {
		return "never"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + d.Round(time.Second).String()
	}
	return "now"
}

// InboxShowOptions is what `inbox show` runs with.
type InboxShowOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)
	Now func() time.Time

	ID        string
	JSON      bool
	WholeDiff bool
}

func NewCmdInboxShow(f *Factory, runF func(context.Context, *InboxShowOptions) error) *cobra.Command {
	o := &InboxShowOptions{IO: f.IO, Env: f.supervision, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "One request in full: the command, the file and its diff, the URL, the decision",
		Long: `Shows one request: what the agent asked (command, file, URL), its risk,
its session, and the decision once taken. An edit's diff is shown up to
256 KiB; a longer one is cut there (the request keeps the whole in a file,
with its size and SHA-256): --whole-diff prints the whole diff alone, as the
agent asked it (escaped on a terminal; as it is when piped, for a pager or
git apply).`,
		Example: `  agentinfra inbox show 12
  agentinfra inbox show 12 --json
  agentinfra inbox show 12 --whole-diff | less`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return inboxShowRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the request as JSON")
	cmd.Flags().BoolVar(&o.WholeDiff, "whole-diff", false, "print the request's whole diff, however long, and nothing else")
	cmd.MarkFlagsMutuallyExclusive("json", "whole-diff")
	return cmd
}

func inboxShowRun(ctx context.Context, o *InboxShowOptions) error {
	id, err := parseID("request", o.ID)
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if o.WholeDiff {
		return printWholeDiff(ctx, o.IO, env.svc, id)
	}
	r, err := env.svc.Request(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, r)
	}
	ses, _ := env.svc.Session(ctx, r.SessionID)
	w := o.IO.Out
	// Every text below but the numbers and statuses came from the agent
	// (or the MCP client): shown inert (termsafe).
	line := termsafe.Line
	fmt.Fprintf(w, "Request %d: %s\n", r.ID, line(oneLine(r.Title)))
	fmt.Fprintf(w, "Status:   %s\n", r.Status)
	fmt.Fprintf(w, "Risk:     %s\n", r.Risk)
	fmt.Fprintf(w, "Session:  %d (%s, owner %s, %s)\n", ses.ID, line(ses.CLI), line(supervision.Handle(ses.Owner)), line(ses.Workspace))
	fmt.Fprintf(w, "Tool:     %s\n", line(r.Tool))
	if r.Command != "" {
		fmt.Fprintf(w, "Command:  %s\n", line(r.Command))
	}
	if r.File != "" {
		fmt.Fprintf(w, "File:     %s\n", line(r.File))
	}
	if r.URL != "" {
		fmt.Fprintf(w, "URL:      %s\n", line(r.URL))
	}
	fmt.Fprintf(w, "Asked:    %s (%s ago)\n", r.CreatedAt.Local().Format(time.RFC3339), since(o.Now(), r.CreatedAt))
	if r.Status == supervision.StatusPending {
		// A decided request no longer expires.
		fmt.Fprintf(w, "Expires:  %s\n", expiry(o.Now(), r.ExpiresAt))
	} else {
		fmt.Fprintf(w, "Decided:  %s via %s by %s", r.Status, r.Surface, line(supervision.Handle(r.DecidedBy)))
		if r.DecidedAt != nil {
			fmt.Fprintf(w, " at %s", r.DecidedAt.Local().Format(time.RFC3339))
		}
		fmt.Fprintln(w)
		if r.Reason != "" {
			fmt.Fprintf(w, "Reason:   %s\n", line(r.Reason))
		}
		if r.Scope == supervision.ScopeSession {
			fmt.Fprintf(w, "Scope:    the same action for the rest of session %d\n", r.SessionID)
		}
	}
	if r.Diff != "" {
		fmt.Fprintf(w, "\n%s", termsafe.Text(r.Diff))
		if !strings.HasSuffix(r.Diff, "\n") {
			fmt.Fprintln(w)
		}
	}
	if r.DiffCut() {
		fmt.Fprintf(w, "%s\n", diffCutNote(r))
	}
	if r.Status == supervision.StatusPending {
		fmt.Fprintf(w, "\nDecide: agentinfra approve %d   |   agentinfra reject %d --reason TEXT\n", r.ID, r.ID)
	}
	return nil
}

// diffCutNote says that a request's diff is cut, how long the whole is,
// and how to see it.
func diffCutNote(r supervision.Request) string {
	return fmt.Sprintf("… the diff is cut here at %d KiB: the whole is %d bytes (SHA-256 %s): agentinfra inbox show %d --whole-diff",
		supervision.MaxDiffBytes>>10, r.DiffBytes, r.DiffSHA256, r.ID)
}

// printWholeDiff streams request id's whole diff: escaped on a terminal
// (the agent wrote it), as it is otherwise (a patch for git apply).
func printWholeDiff(ctx context.Context, ios *cli.IOStreams, svc *supervision.Service, id int64) error {
	diff, _, err := svc.WholeDiff(ctx, id)
	if err != nil {
		return err
	}
	defer diff.Close()
	if ios.IsTTY {
		_, err = termsafe.Copy(ios.Out, diff, termsafe.Text)
	} else {
		_, err = io.Copy(ios.Out, diff)
	}
	return err
}

// warnStorageFailures tells the person at the inbox about the storage
// failures of the last day (lost databases, requests denied because they
// could not be recorded): they are in a file, which nobody reads unasked.
func warnStorageFailures(ios *cli.IOStreams, ws *workspace.Workspace, now time.Time) {
	fs, _ := supervision.StorageFailures(ws)
	var recent []supervision.StorageFailure
	for _, f := range fs {
		if now.Sub(f.At) < 24*time.Hour && f.What != "reset" {
			recent = append(recent, f)
		}
	}
	if len(recent) == 0 {
		return
	}
	last := recent[len(recent)-1]
	fmt.Fprintf(ios.ErrOut, "agentinfra: warning: %d storage failure(s) in the last day, the last at %s: %s (all in %s)\n",
		len(recent), last.At.Local().Format("15:04:05"), termsafe.Line(last.Text), ws.RelPath(supervision.StorageFailuresPath(ws)))
}
