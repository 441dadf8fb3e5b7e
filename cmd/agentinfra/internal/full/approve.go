package full

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

// DecideOptions is what `approve` and `reject` run with.
type DecideOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)

	ID      string
	Approve bool
	Always  bool
	Session bool
	Yes     bool
	Reason  string
	JSON    bool
}

func NewCmdApprove(f *Factory, runF func(context.Context, *DecideOptions) error) *cobra.Command {
	o := &DecideOptions{IO: f.IO, Env: f.supervision, Approve: true}
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a pending request (the agent goes on)",
		Long: `Approves a pending approval request. Of any number of answers given at once
(from terminals, the web page, Slack) exactly one wins; the others are told
who decided first. A request that expired cannot be approved.

--always also adds a rule to the workspace policy (.agent/policy.yaml) so that
such requests are approved without asking from now on: the exact command, the
file's path, or the tool. The change is shown as a diff and written only when
you confirm (or with --yes). Commands also need your own allowlist to list
them (allowlist.yaml in your config folder).

--session approves the same action (the same tool with the same command, file
or URL) for the rest of the request's session only: asked again, it runs
without a new request; nothing is written to the policy. The audit log keeps
each such approval with its scope.

Only the session's owner, or an operator named in .agent/config.yaml
(supervision.operators), may decide. $AGENTINFRA_USER says who you are
(default: your login name).`,
		Example: `  agentinfra approve 12
  agentinfra approve 12 --always
  agentinfra approve 12 --session
  agentinfra approve 12 --always --yes --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return decideRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Always, "always", false, "also auto-approve such requests from now on (adds a rule to .agent/policy.yaml)")
	cmd.Flags().BoolVar(&o.Session, "session", false, "also approve the same action for the rest of this session (no policy rule)")
	cmd.MarkFlagsMutuallyExclusive("always", "session")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "with --always: write the rule without asking")
	cmd.Flags().StringVar(&o.Reason, "reason", "", "a note kept with the decision")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the decided request as JSON")
	return cmd
}

func NewCmdReject(f *Factory, runF func(context.Context, *DecideOptions) error) *cobra.Command {
	o := &DecideOptions{IO: f.IO, Env: f.supervision}
	cmd := &cobra.Command{
		Use:   "reject ID --reason TEXT",
		Short: "Reject a pending request; the reason goes to the agent",
		Long: `Rejects a pending approval request. The reason reaches the agent's model:
claude gets it as the tool's result, codex as a message in the same turn,
gemini as the next prompt once its turn ends (its protocol carries no reason).`,
		Example: `  agentinfra reject 12 --reason "use a temporary folder, not the repo"
  agentinfra reject 12 --reason "no network" --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if strings.TrimSpace(o.Reason) == "" {
				return cli.UsageErrorf("reject needs --reason TEXT: the agent is told why")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return decideRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why (sent to the agent)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the decided request as JSON")
	return cmd
}

func decideRun(ctx context.Context, o *DecideOptions) error {
	id, err := parseID("request", o.ID)
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	d := supervision.Decision{Request: id, Approve: o.Approve, Reason: o.Reason, ForSession: o.Session}
	if o.Always {
		plan, err := env.svc.PlanAlways(ctx, id)
		if err != nil {
			return err
		}
		if plan.Diff != "" {
			fmt.Fprint(o.IO.ErrOut, termsafe.Text(plan.Diff)) // its rule is made of the agent's command or path
			if !o.Yes && !confirm(o.IO, "Add this rule to .agent/policy.yaml and approve?") {
				return &agenterr.Error{Kind: agenterr.Refused, Override: "yes", Reason: "nothing changed: the rule was not confirmed"}
			}
		}
		if plan.Note != "" {
			fmt.Fprintf(o.IO.ErrOut, "note: %s\n", termsafe.Text(plan.Note))
		}
		d.Always = plan
	}
	r, err := env.svc.Decide(ctx, env.user, d)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, r)
	}
	scope := ""
	if r.Scope == supervision.ScopeSession {
		scope = " for the rest of session " + fmt.Sprint(r.SessionID)
	}
	fmt.Fprintf(o.IO.Out, "Request %d %s%s by %s.\n", r.ID, r.Status, scope, supervision.Handle(r.DecidedBy))
	return nil
}

// confirm asks a yes/no question on the terminal (no answer is no).
func confirm(io *cli.IOStreams, question string) bool {
	fmt.Fprintf(io.ErrOut, "%s [y/N] ", question)
	line, _ := bufio.NewReader(io.In).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
