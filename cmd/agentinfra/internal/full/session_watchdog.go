package full

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

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
