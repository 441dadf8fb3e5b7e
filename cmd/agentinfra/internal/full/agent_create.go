package full

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/runner"
)

// AgentCreateOptions is what `agent create` runs with.
type AgentCreateOptions struct {
	IO    *cli.IOStreams
	Fleet func() (fleet.Backend, error)

	Create fleet.CreateInput
	JSON   bool
}

func NewCmdAgentCreate(f *Factory, runF func(context.Context, *AgentCreateOptions) error) *cobra.Command {
	o := &AgentCreateOptions{IO: f.IO, Fleet: f.fleetOf}
	cmd := &cobra.Command{
		Use:   "create NAME --spec TEXT",
		Short: "Create an agent: a worktree on a new branch, then its first run on the spec",
		Long: `Create an agent named NAME (1–20 letters, digits and single hyphens, 1–32 on
the Coder backend as Coder allows; unique regardless of case). It gets a git worktree on a new branch agent/NAME from the
project's base branch, outside the repository (../REPO-agents/NAME by default),
runs the configured setup command there, and starts working on its spec at once.

Its role (.agent/agents/ROLE.md) is the system prompt of every run: claude and
codex add it after their own system prompt, gemini uses it instead of its own
(docs/fleet.md says why).`,
		Example: `  agentinfra agent create papi --spec "Keep the API tests green"
  agentinfra agent create sony --role reviewer --cli claude --spec "Review every REVIEW task"
  agentinfra agent create web-1 --project web --spec "Own the storefront" --json
  agentinfra agent create papi --spec "Fix the flaky tests" --approval-mode ask   # supervised runs`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Create.Name, o.Create.Source = args[0], f.fleetSource()
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return agentCreateRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Create.Spec, "spec", "", "the agent's standing objective (required)")
	cmd.Flags().StringVar(&o.Create.Role, "role", "", "its role, one of role list (default: fleet.role in config, else coder)")
	cmd.Flags().StringVar(&o.Create.Project, "project", "", "the project (default: this repository; see agentinfra project list)")
	cmd.Flags().StringVar(&o.Create.CLI, "cli", "", "agent CLI: gemini, claude or codex (default: fleet.cli in config, else gemini)")
	cmd.Flags().StringVar(&o.Create.ApprovalMode, "approval-mode", "", "tool approval of the agent's runs: "+strings.Join(runner.ApprovalModes, ", ")+
		" (default: fleet.approval_mode in config, else yolo); ask waits for agentinfra approve on what the policy does not allow")
	cli.RegisterFlagCompletion(cmd, "approval-mode", cobra.FixedCompletions(runner.ApprovalModes, cli.NoFiles))
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {agent, message} as JSON")
	cli.RegisterFlagCompletion(cmd, "role", cli.CompleteModes(f.Factory))
	return cmd
}

func agentCreateRun(ctx context.Context, o *AgentCreateOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	ctx, notes := withFleetNotices(ctx)
	a, err := fl.Create(ctx, o.Create)
	if err != nil {
		return fleetFailed(o.IO, notes, err)
	}
	res := fleet.WithWarnings(fleet.NewCreateResult(a), notes.Texts()).(fleet.AgentResult)
	cli.PrintWarnings(o.IO, res.Warnings)
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, res)
	}
	fmt.Fprintln(o.IO.Out, res.Message)
	return nil
}
