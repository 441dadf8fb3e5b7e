package full

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/supervision"
)

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
