// Package localtest makes a test binary a local fleet's run supervisor,
// as the CLI's hidden `agent run-supervisor` command is: a package whose
// tests run agents on a local fleet (with the stand-in agent CLI) starts
// its own test binary as each run's supervisor instead of building the
// whole CLI.
package localtest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options are a local fleet's options whose runs are supervised by this
// test binary — started with env=1 in its environment, which its TestMain
// hands to Supervise — and whose agent CLI is stub with stubEnv; stops
// wait briefly.
func Options(env, stub string, stubEnv ...string) local.Options {
	return local.Options{
		SupervisorArgv: []string{os.Args[0]},
		SupervisorEnv:  []string{env + "=1"},
		Binary:         stub,
		Env:            stubEnv,
		KillGrace:      300 * time.Millisecond,
		StopGrace:      300 * time.Millisecond,
	}
}

// Supervise is the supervisor's main: args are the "--root ROOT NAME
// RUN" the local fleet appends, o the supervisor's options. It returns
// the exit code.
func Supervise(args []string, o local.Options) int {
	if len(args) != 4 || args[0] != "--root" {
		fmt.Fprintln(os.Stderr, "usage: --root ROOT NAME RUN")
		return 2
	}
	ws, err := workspace.New(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := local.RunSupervisor(ctx, ws, args[2], args[3], o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
