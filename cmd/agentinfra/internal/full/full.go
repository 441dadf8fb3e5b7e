// Package full is the rest of the agentinfra command line: the commands
// that reach the supervision database (modernc.org/sqlite), the MCP SDK,
// Slack or the web console (agent, dispatch, serve, inbox, approve, session,
// console, slack...), on top of package cli's tree. Its binary,
// agentinfra-full, runs every command; agentinfra links only package cli and
// hands these commands over to it, so that the light commands do not pay
// for these packages' start-up.
package full

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// Factory is cli's Factory, with the methods that open what this package's
// commands need (the fleet, the supervision database).
type Factory struct{ *cli.Factory }

// Commands builds this package's top-level commands for cli.NewRootCmd.
func Commands(cf *cli.Factory) []*cobra.Command {
	f := &Factory{cf}
	return []*cobra.Command{
		NewCmdDispatch(f, nil),
		NewCmdAgent(f),
		NewCmdRole(f),
		NewCmdProject(f),
		NewCmdServe(f, nil),
		NewCmdInbox(f, nil),
		NewCmdApprove(f, nil),
		NewCmdReject(f, nil),
		NewCmdSession(f),
		NewCmdAnswer(f, nil),
		NewCmdSteer(f, nil),
		NewCmdCheckpoint(f),
		NewCmdSlack(f, nil),
		NewCmdConsole(f, nil),
		NewCmdDoctor(f, nil),
	}
}

// newRootCmd is the whole command tree.
func newRootCmd(f *Factory) *cobra.Command { return cli.NewRootCmd(f.Factory, Commands) }

// run runs the whole command tree in-process, as agentinfra-full's main does.
func run(ctx context.Context, args []string, f *Factory) int {
	return cli.Run(ctx, args, f.Factory, Commands)
}
