package full

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

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
