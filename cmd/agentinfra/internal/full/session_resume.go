package full

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/supervision/resume"
)

// sessionResumeRun is `session resume ID`: a paused session goes on; one
// interrupted because its supervisor died is restarted on its CLI's own
// session under a new supervisor (supervision.Service.Resume).
func sessionResumeRun(ctx context.Context, o *SessionOptions) error {
	id, err := parseID("session", o.ID)
	if err != nil {
		return err
	}
	env, err := o.Env(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	r, err := env.svc.Resume(ctx, env.user, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, r)
	}
	if !r.Restarted {
		fmt.Fprintf(o.IO.Out, "Session %d is %s.\n", r.Session.ID, r.Session.Status)
		return nil
	}
	where := ""
	if r.Session.Host != "" {
		// The run and its supervisor are the host's, in its workspace.
		where = " in workspace " + r.Session.Host
	}
	fmt.Fprintf(o.IO.Out, "Session %d is resumed: its run goes on under a new supervisor (pid %d%s)", r.Session.ID, r.Supervisor, where)
	if r.RunID != "" {
		fmt.Fprintf(o.IO.Out, ", run %s", r.RunID)
	}
	fmt.Fprintf(o.IO.Out, ".\nFollow it with `agentinfra session show %d`; its requests wait in `agentinfra inbox`.\n", r.Session.ID)
	return nil
}

// newCmdSessionRunResumed is the supervisor of a dispatch's resumed run,
// started detached by session resume (package supervision/resume); not for
// people.
func newCmdSessionRunResumed(f *Factory) *cobra.Command {
	var by string
	var auto bool
	cmd := &cobra.Command{
		Use:    "run-resumed SESSION",
		Short:  "Run the resumed run of a dispatch's session (started by session resume)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("session", args[0])
			if err != nil {
				return err
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			// As dispatch: the run's processes stay below this one, and
			// are ended with the run.
			contain.BecomeSubreaper()
			out, err := resume.RunDispatch(cmd.Context(), ws, id, by, auto, f.Getenv)
			fmt.Fprintf(f.IO.ErrOut, "agentinfra: resumed run of session %d: %s %s\n", id, out.RunID, out.Outcome)
			return err
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who resumed it")
	cmd.Flags().BoolVar(&auto, "auto", false, "resumed by supervision.resume: auto")
	return cmd
}
