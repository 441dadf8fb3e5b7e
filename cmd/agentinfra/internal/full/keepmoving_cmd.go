package full

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

// KeepMovingOptions is what answer, steer, checkpoint and the session
// watchdog / purge commands run with.
type KeepMovingOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)
	Now func() time.Time

	Args   []string
	Label  string
	Force  bool
	DryRun bool
	Older  int
	JSON   bool
}

func (f *Factory) keepMovingOptions() *KeepMovingOptions {
	return &KeepMovingOptions{IO: f.IO, Env: f.supervision, Now: f.Now}
}

// parseItem reads a prompt (p12) or stall alert (s12) ID.
func parseItem(s string) (kind byte, id int64, err error) {
	s = strings.TrimPrefix(strings.ToLower(s), "#")
	if len(s) > 1 && (s[0] == 'p' || s[0] == 's') {
		if id, err := strconv.ParseInt(s[1:], 10, 64); err == nil && id > 0 {
			return s[0], id, nil
		}
	}
	return 0, 0, cli.UsageErrorf("%q is not a prompt (p12) or stall alert (s12) ID: `agentinfra inbox` lists them; approval requests are decided with approve/reject", s)
}

func NewCmdAnswer(f *Factory, runF func(context.Context, *KeepMovingOptions) error) *cobra.Command {
	o := f.keepMovingOptions()
	cmd := &cobra.Command{
		Use:   "answer ID continue|stop|refine TEXT|nudge [TEXT]|dismiss",
		Short: "Answer a continuation prompt (p12) or a stall alert (s12)",
		Long: `Decides what a supervised run waits for, as approve/reject do for requests.

A continuation prompt (p12) is raised when a turn ends and the run is not
finished: the agent stopped short (continuation), asked a question
(clarification), hit an error (error_recovery) or nears a budget
(resource_warning). Answer:
  continue      the agent goes on
  refine TEXT   TEXT is sent as the next message, and the agent goes on
  stop          the run ends (the task goes to supervision.prompts.stop_status)

A stall alert (s12) is raised when the agent was silent too long. Answer:
  nudge [TEXT]  send the agent a message (default: the watchdog's nudge)
  dismiss       the silence is fine
  stop          stop the session's run

Of any number of answers given at once exactly one wins; the others are told
who answered first. An answer after a prompt's timeout gets the timeout's
outcome instead (continue; an error_recovery prompt never continues by itself).`,
		Example: `  agentinfra answer p4 continue
  agentinfra answer p4 refine "use SQLite, not Postgres"
  agentinfra answer p4 stop --json
  agentinfra answer s2 nudge "are the tests still running?"
  agentinfra answer s2 dismiss`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return answerRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the decided prompt or alert as JSON")
	return cmd
}

func answerRun(ctx context.Context, o *KeepMovingOptions) error {
	kind, id, err := parseItem(o.Args[0])
	if err != nil {
		return err
	}
	action, text := o.Args[1], strings.Join(o.Args[2:], " ")
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if kind == 'p' {
		switch action {
		case supervision.ActionContinue, supervision.ActionStop:
			if text != "" {
				return cli.UsageErrorf("%s takes no text; did you mean refine %q?", action, text)
			}
		case supervision.ActionRefine:
			if strings.TrimSpace(text) == "" {
				return cli.UsageErrorf("refine needs the new instruction: agentinfra answer p%d refine \"TEXT\"", id)
			}
		default:
			return cli.UsageErrorf("a prompt is answered with continue, refine TEXT or stop, not %q", action)
		}
		p, err := env.svc.AnswerPrompt(ctx, env.user, supervision.PromptAnswer{Prompt: id, Action: action, Instruction: text})
		if err != nil {
			return err
		}
		if o.JSON {
			return cli.WriteJSON(o.IO.Out, p)
		}
		fmt.Fprintf(o.IO.Out, "Prompt p%d %s by %s.\n", p.ID, p.Status, supervision.Handle(p.DecidedBy))
		return nil
	}
	switch action {
	case supervision.AlertNudge, supervision.AlertDismiss, supervision.AlertStop:
	default:
		return cli.UsageErrorf("a stall alert is answered with nudge [TEXT], dismiss or stop, not %q", action)
	}
	a, err := env.svc.AnswerAlert(ctx, env.user, supervision.AlertAnswer{Alert: id, Action: action, Text: text})
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, a)
	}
	fmt.Fprintf(o.IO.Out, "Stall alert s%d %s by %s.\n", a.ID, a.Status, supervision.Handle(a.DecidedBy))
	if action == supervision.AlertNudge {
		fmt.Fprintf(o.IO.Out, "The nudge is queued for session %d: its supervisor sends it as the next message.\n", a.SessionID)
	}
	return nil
}

func NewCmdSteer(f *Factory, runF func(context.Context, *KeepMovingOptions) error) *cobra.Command {
	o := f.keepMovingOptions()
	cmd := &cobra.Command{
		Use:   "steer SESSION TEXT",
		Short: "Send a running session's agent a message (its next user message)",
		Long: `Queues TEXT for a supervised session; its supervisor delivers it as the next
user message and records it: claude takes it at once (mid-turn too), codex
steers the running turn (or starts one when idle), gemini takes it when its
turn ends (its protocol cancels a turn that gets a new prompt). A
continuation prompt that waits is answered by the message.`,
		Example: `  agentinfra steer 3 "also run go vet before you finish"
  agentinfra steer 3 "stop refactoring, only fix the test" --json`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return steerRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the queued message as JSON")
	return cmd
}

func steerRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("session", o.Args[0])
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	m, err := env.svc.Steer(ctx, env.user, id, strings.Join(o.Args[1:], " "))
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, m)
	}
	fmt.Fprintf(o.IO.Out, "Message %d queued for session %d.\n", m.ID, id)
	return nil
}

func NewCmdCheckpoint(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Snapshots of a session's worktree: create, list, restore",
		Long: `A checkpoint records a session's whole worktree — tracked files with their
changes, new files, recursively (not what .gitignore ignores) — as a git commit
under the private ref refs/agentinfra/checkpoints/ (no branch, the index and
HEAD untouched), with a hash per file. Restore lists the files that changed
since and refuses without --force when any did; it stops the session's run
first. supervision.checkpoint_before_edit in .agent/config.yaml takes one
before each approved edit.`,
		Example: `  agentinfra checkpoint create 3 --label "before the refactor"
  agentinfra checkpoint list 3
  agentinfra checkpoint restore 7
  agentinfra checkpoint restore 7 --force`,
	}
	mk := func(use, short, example string, args cobra.PositionalArgs, run func(context.Context, *KeepMovingOptions) error) (*cobra.Command, *KeepMovingOptions) {
		o := f.keepMovingOptions()
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error { o.Args = a; return run(cmd.Context(), o) }}
		c.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
		return c, o
	}
	create, co := mk("create SESSION", "Snapshot the session's worktree", "  agentinfra checkpoint create 3 --label \"tests pass\"", cobra.ExactArgs(1), checkpointCreateRun)
	create.Flags().StringVar(&co.Label, "label", "", "a name for the checkpoint")
	list, _ := mk("list [SESSION]", "Checkpoints, oldest first (of one session or all)", "  agentinfra checkpoint list\n  agentinfra checkpoint list 3 --json", cobra.MaximumNArgs(1), checkpointListRun)
	restore, ro := mk("restore CHECKPOINT", "Put the worktree back as the checkpoint recorded it", "  agentinfra checkpoint restore 7 --force", cobra.ExactArgs(1), checkpointRestoreRun)
	restore.Flags().BoolVar(&ro.Force, "force", false, "restore even though files changed since the checkpoint (they are overwritten)")
	cmd.AddCommand(create, list, restore)
	return cmd
}

func checkpointCreateRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("session", o.Args[0])
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := env.svc.CreateCheckpoint(ctx, env.user, id, o.Label)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, c)
	}
	fmt.Fprintf(o.IO.Out, "Checkpoint %d of session %d: %s (%s)\n", c.ID, id, c.Commit[:12], c.Ref)
	return nil
}

func checkpointListRun(ctx context.Context, o *KeepMovingOptions) error {
	var id int64
	if len(o.Args) == 1 {
		var err error
		if id, err = parseID("session", o.Args[0]); err != nil {
			return err
		}
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	cps, err := env.svc.Checkpoints(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, orEmpty(cps))
	}
	if len(cps) == 0 {
		fmt.Fprintln(o.IO.Out, "No checkpoints.")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSESSION\tCOMMIT\tAGE\tBY\tLABEL")
	for _, c := range cps {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.SessionID, orDash(short(c.Commit)), since(o.Now(), c.CreatedAt), supervision.Handle(c.CreatedBy), termsafe.Line(mdtext.Shorten(oneLine(c.Label), 60)))
	}
	return tw.Flush()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func checkpointRestoreRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("checkpoint", o.Args[0])
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	c, changed, err := env.svc.RestoreCheckpoint(ctx, env.user, supervision.Restore{Checkpoint: id, Force: o.Force, StopLive: true})
	if errors.Is(err, supervision.ErrNotFound) && c.ID == 0 {
		return fmt.Errorf("%w; `agentinfra checkpoint list` shows them", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, struct {
			Checkpoint supervision.Checkpoint         `json:"checkpoint"`
			Changed    []supervision.CheckpointChange `json:"changed"`
		}{c, orEmpty(changed)})
	}
	if len(changed) == 0 {
		fmt.Fprintf(o.IO.Out, "The worktree already matches checkpoint %d.\n", c.ID)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "Restored checkpoint %d in %s:\n", c.ID, c.Dir)
	for _, ch := range changed {
		fmt.Fprintf(o.IO.Out, "  %-8s %s\n", ch.Status, termsafe.Line(ch.Path)) // a name the agent chose
	}
	return nil
}

// newCmdSessionWatchdog is `session watchdog ID pause|resume`.
func newCmdSessionWatchdog(f *Factory) *cobra.Command {
	o := f.keepMovingOptions()
	cmd := &cobra.Command{
		Use:   "watchdog ID pause|resume",
		Short: "Pause or resume a session's stall watchdog (a long build is expected)",
		Long: `The stall watchdog raises an alert when a session's agent is silent for
supervision.watchdog.threshold (default 5m), nudges it, and escalates. Pause it
when a long silence is expected; pausing dismisses the active alert.`,
		Example: "  agentinfra session watchdog 3 pause\n  agentinfra session watchdog 3 resume --json",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			return sessionWatchdogRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func sessionWatchdogRun(ctx context.Context, o *KeepMovingOptions) error {
	id, err := parseID("session", o.Args[0])
	if err != nil {
		return err
	}
	var pause bool
	switch o.Args[1] {
	case "pause":
		pause = true
	case "resume":
	default:
		return cli.UsageErrorf("session watchdog takes pause or resume, not %q", o.Args[1])
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.svc.SetWatchdog(ctx, env.user, id, pause); err != nil {
		return err
	}
	state := map[bool]string{true: "paused", false: "watching"}[pause]
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, map[string]any{"session": id, "watchdog": state})
	}
	fmt.Fprintf(o.IO.Out, "The watchdog of session %d is %s.\n", id, state)
	return nil
}

// newCmdSessionPurge is `session purge [--dry-run]`.
func newCmdSessionPurge(f *Factory) *cobra.Command {
	o := f.keepMovingOptions()
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete sessions that ended more than retention_days ago, with all that is theirs",
		Long: `Deletes the sessions that ended (terminated or interrupted) more than
supervision.retention_days ago (default 30), with their requests, alerts,
prompts, steering messages, checkpoints (and their git refs) and audit rows,
in short batches that never hold the database for long. Live sessions are
never touched. --dry-run counts what would go.`,
		Example: "  agentinfra session purge --dry-run\n  agentinfra session purge\n  agentinfra session purge --older-than 7 --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return sessionPurgeRun(cmd.Context(), o) },
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "count what would be deleted; delete nothing")
	cmd.Flags().IntVar(&o.Older, "older-than", 0, "days (default: supervision.retention_days, 30)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the counts as JSON")
	return cmd
}

func sessionPurgeRun(ctx context.Context, o *KeepMovingOptions) error {
	if o.Older < 0 {
		return cli.UsageErrorf("--older-than is a number of days")
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	keep, err := env.svc.Retention()
	if err != nil {
		return err
	}
	if o.Older > 0 {
		keep = time.Duration(o.Older) * 24 * time.Hour
	}
	before := o.Now().Add(-keep)
	rep, err := env.svc.Purge(ctx, env.user, before, o.DryRun)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, rep)
	}
	verb := "Purged"
	if o.DryRun {
		verb = "Would purge"
	}
	fmt.Fprintf(o.IO.Out, "%s %d session(s) that ended before %s: %d requests, %d alerts, %d prompts, %d steering messages, %d checkpoints, %d audit rows.\n",
		verb, rep.Sessions, before.Format("2006-01-02"), rep.Requests, rep.Alerts, rep.Prompts, rep.Steering, rep.Checkpoints, rep.Audit)
	return nil
}
