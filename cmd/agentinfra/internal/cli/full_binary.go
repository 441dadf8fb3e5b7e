package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
)

// The commands that reach the supervision database (modernc.org/sqlite), the
// MCP SDK, Slack or the web console (the fleet, dispatch, serve, the inbox...)
// live in a second binary, agentinfra-full (package full). Go runs the init of
// every package a binary links, in every process: linked here, they cost
// every light command (task, validate, prompt...) ~20% of its start-up
// (README "Start-up"). This binary lists them with their one-line help and
// passes them on with execve: same pid, arguments, environment and streams;
// the exit code and the signals are then the other program's own.

// FullBinary is the name of the binary that runs every command; `go install
// ./cmd/...` installs it next to agentinfra.
const FullBinary = "agentinfra-full"

// Commands builds the commands this package does not link (package full's).
// nil stands for the stubs that pass them on to FullBinary.
type Commands func(f *Factory) []*cobra.Command

// HeavyCommand is a top-level command of FullBinary as this binary lists it.
type HeavyCommand struct {
	Name, Short string
}

// HeavyCommands are the top-level commands only FullBinary runs. package
// full's TestHeavyCommandsAreTheFullTreesOwn checks them against its tree.
var HeavyCommands = []HeavyCommand{
	{"agent", "Run a fleet of named agents, each in its own git worktree"},
	{"answer", "Answer a continuation prompt (p12) or a stall alert (s12)"},
	{"approve", "Approve a pending request (the agent goes on)"},
	{"checkpoint", "Snapshots of a session's worktree: create, list, restore"},
	{"console", "A web page for the inbox, the sessions, the fleet and the task board"},
	{"doctor", "Check what this machine offers to contain and supervise agents"},
	{"dispatch", "Run a task through an agent CLI (gemini, claude, codex) headless and record the outcome"},
	{"inbox", "What supervised sessions wait for: approval requests, continuation prompts, stall alerts"},
	{"project", "The projects agents work in (this repository and those in .agent/config.yaml)"},
	{"reject", "Reject a pending request; the reason goes to the agent"},
	{"role", "The roles a fleet's agents can be made as"},
	{"serve", "Serve agentinfra's tools and resources over MCP (stdio, or streamable HTTP with --http)"},
	{"session", "Supervised sessions: list, show, pause, resume, stop"},
	{"slack", "Serve the Slack surface: a thread per remote session, approvals by button"},
	{"steer", "Send a running session's agent a message (its next user message)"},
}

// heavyStubs are HeavyCommands as commands of this binary: running one, its
// help (--help, `help NAME`) and its shell completion (cobra's __complete)
// all pass the whole command line on to FullBinary (runFull).
func heavyStubs(f *Factory) []*cobra.Command {
	var cmds []*cobra.Command
	for _, h := range HeavyCommands {
		c := &cobra.Command{
			Use:   h.Name,
			Short: h.Short,
			// Every flag and subcommand is FullBinary's to parse.
			DisableFlagParsing: true,
			RunE:               func(*cobra.Command, []string) error { return f.runFull() },
			ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				// Returns only when FullBinary cannot be run: complete nothing.
				_ = f.runFull()
				return nil, NoFiles
			},
		}
		c.SetHelpFunc(func(*cobra.Command, []string) { f.execFullErr = f.runFull() })
		cmds = append(cmds, c)
	}
	return cmds
}

// runFull replaces this process with FullBinary run on the same command
// line; it returns only when that cannot be done.
func (f *Factory) runFull() error {
	if f.ExecFull == nil {
		return &agenterr.Error{Kind: agenterr.Unavailable, Reason: "this command is run by " + FullBinary + ", and this process cannot exec it"}
	}
	return f.ExecFull()
}

// execFull replaces the process with FullBinary, given argv (argv[0]
// included) and the environment: what only returns on failure.
func execFull(argv, env []string) error {
	path, err := findFull()
	if err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, env); err != nil {
		return &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf("cannot run %s: %v", path, err), Err: err}
	}
	return nil
}

// findFull finds FullBinary next to this executable (symbolic links
// resolved: a link in ~/bin to a build elsewhere finds the build's
// neighbour), then on PATH.
func findFull() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), FullBinary)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(FullBinary)
	if err == nil {
		return p, nil
	}
	if errors.Is(err, exec.ErrDot) {
		// Found only through a relative PATH entry: run it as found.
		return p, nil
	}
	return "", &agenterr.Error{Kind: agenterr.Unavailable,
		Reason: "this command is run by " + FullBinary + ", which is neither next to agentinfra nor on PATH: install both with `go install ./cmd/...` in agentinfra's repository (or put " + FullBinary + " next to agentinfra)"}
}
