// Package cli is the agentinfra command line (cmd/agentinfra): the cobra
// command tree in cli/cli's shape (an Options struct, NewCmdX(f, runF), xRun
// per command), the Factory every command gets, and the mapping of errors to
// exit codes.
package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/agentinfra/agentinfra/task"
)

// Main runs the command line on the process's arguments and returns the exit
// code. heavy builds the commands of package full; nil (cmd/agentinfra)
// passes them on to FullBinary (Factory.ExecFull).
func Main(heavy Commands) int {
	// Most commands live for milliseconds and allocate a few MiB parsing the
	// matrix: collecting that garbage costs more than it saves. serve resets it.
	debug.SetGCPercent(400)
	// The handler is in place before any command starts: a server (serve,
	// metadata serve) told to stop right after it answered must stop cleanly,
	// not die of the signal (installing it on a goroutine saved ~0.15 ms of
	// start-up but lost such signals under load).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f := defaultFactory()
	if heavy == nil {
		f.ExecFull = func() error { return execFull(os.Args, os.Environ()) }
	}
	code := Run(ctx, os.Args[1:], f, heavy)
	stop()
	return code
}

// run is Run on this package's command tree.
func run(ctx context.Context, args []string, f *Factory) int { return Run(ctx, args, f, nil) }

// Run executes the CLI (NewRootCmd's tree) and maps errors to exit codes: 0
// ok, 2 usage, else the error kind's (ReportError).
func Run(ctx context.Context, args []string, f *Factory, heavy Commands) (code int) {
	defer func() {
		if r := recover(); r != nil {
			err, ok := mappedFault(r)
			if !ok {
				panic(r)
			}
			fmt.Fprintln(f.IO.ErrOut, "error:", err)
			code = 1
		}
	}()
	root := NewRootCmd(f, heavy)
	root.SetArgs(args)
	// Who runs the command: every task write records it (the status log,
	// the change's event).
	ctx = task.WithActor(ctx, task.ActorFromEnv(f.Getenv))
	// What a write noticed on the way (a leftover of a killed command it
	// rolled back) goes to stderr, whatever the command.
	ctx = task.WithNotify(ctx, func(msg string) { fmt.Fprintln(f.IO.ErrOut, "warning:", msg) })
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		err = f.execFullErr
	}
	if err == nil {
		return 0
	}
	return ReportError(f.IO.ErrOut, cmd, err, wantsJSON(cmd, args))
}
