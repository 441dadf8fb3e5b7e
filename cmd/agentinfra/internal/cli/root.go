package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// IOStreams are the process streams; tests swap them for buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY reports whether Out is a terminal (aligned, coloured output).
	IsTTY bool
	// Width is the terminal width when IsTTY, else 0.
	Width int
	// InTTY reports whether In is a terminal (a person who can answer).
	InTTY bool
}

// Factory carries what every command needs, so tests can run commands in-process.
type Factory struct {
	IO *IOStreams
	// Root is the --root flag value ("" means discover).
	Root string
	// Cwd is where workspace discovery starts.
	Cwd string
	// Now is the clock; tests pin it.
	Now func() time.Time
	// Getenv reads the environment; tests override it.
	Getenv func(string) string
	// Backend is the fleet commands' --backend flag ("" = configured).
	Backend string
	// ExecFull replaces the process with FullBinary on the same command
	// line (a command this binary does not link); nil when the process
	// cannot be replaced (in-process tests).
	ExecFull func() error

	// execFullErr is why a help that ExecFull should have shown was not.
	execFullErr error

	// ws is the workspace found by Workspace: one per run, so that the
	// config file is read once (workspace.Workspace.Config).
	ws    *workspace.Workspace
	wsFor string // the root asked for when ws was found
}

func defaultFactory() *Factory {
	cwd, _ := os.Getwd()
	tty, width := terminalInfo(os.Stdout, os.Getenv)
	return &Factory{
		IO:     &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, IsTTY: tty, Width: width, InTTY: term.IsTerminal(int(os.Stdin.Fd()))},
		Cwd:    cwd,
		Now:    time.Now,
		Getenv: os.Getenv,
	}
}

// Workspace resolves the workspace from --root, $AGENTINFRA_ROOT or the
// cwd, once: every later call returns the same one, with the factory's
// environment, so that its config is decoded once.
func (f *Factory) Workspace() (*workspace.Workspace, error) {
	root, from := f.Root, "--root"
	if root == "" && f.Getenv != nil {
		root, from = f.Getenv(workspace.EnvRoot), "$"+workspace.EnvRoot
	}
	if f.ws != nil && f.wsFor == root {
		return f.ws, nil
	}
	ws, err := workspace.Find(root, from, f.Cwd)
	if err != nil {
		return nil, err
	}
	ws.Getenv = f.Getenv
	f.ws, f.wsFor = ws, root
	return ws, nil
}

// NewRootCmd builds the command tree: this package's commands, and heavy's
// (package full's) or, when nil, the stubs that pass them on to
// FullBinary.
func NewRootCmd(f *Factory, heavy Commands) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentinfra",
		Short: "Manage a repository's .agent/ directory: tasks, skills, prompts, dispatch, MCP",
		Long: `agentinfra reads and writes .agent/DEVELOPMENT_MATRIX.md without ever losing a byte
around the rows it changes, scaffolds task folders, assembles prompts from agent
modes and skills, dispatches tasks to agent CLIs, and serves it all over MCP.`,
		Example: `  agentinfra validate
  agentinfra task list --status TODO
  agentinfra task create --description "Add retry to fetcher" --mode coder
  agentinfra serve`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&f.Root, "root", f.Root, "workspace root (default: $AGENTINFRA_ROOT, else the nearest folder holding .agent/)")
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.SetFlagErrorFunc(FlagError)
	// The light commands, in one place; full.Commands lists the others.
	root.AddCommand(
		NewCmdInit(f, nil),
		NewCmdValidate(f, nil),
		NewCmdMigrate(f, nil),
		NewCmdRestore(f, nil),
		NewCmdHook(f),
		NewCmdMergeDriver(f, nil),
		NewCmdTask(f),
		NewCmdPrompt(f, nil),
		NewCmdModel(f, nil),
		NewCmdHandoff(f, nil),
		NewCmdSkill(f),
		NewCmdMode(f),
		NewCmdMetadata(f),
		NewCmdReview(f),
	)
	if heavy != nil {
		root.AddCommand(heavy(f)...)
	} else {
		root.AddCommand(heavyStubs(f)...)
	}
	UsageArgs(root)
	return root
}

// UsageArgs makes every argument check in the tree raise a usage error (exit
// 2), so the exit code never depends on cobra's wording. A command with
// subcommands and no check of its own gets cobra.NoArgs: an unknown
// subcommand is then a usage error too.
func UsageArgs(c *cobra.Command) {
	check := c.Args
	if check == nil && c.HasSubCommands() {
		check = cobra.NoArgs
		if !c.Runnable() {
			// Runnable, so that cobra checks its arguments; alone it shows help.
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	if check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{fmt.Errorf("%w\nrun '%s --help' for usage", err, cmd.CommandPath())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		UsageArgs(sub)
	}
}

// FlagError makes a flag that cannot be parsed a usage error (exit 2).
func FlagError(c *cobra.Command, err error) error {
	return &usageError{fmt.Errorf("%w\nrun '%s --help' for usage", err, c.CommandPath())}
}

// ExitError carries an explicit exit code (e.g. validate's 1 with diagnostics already printed).
// ExitStopped is the exit code of a dispatch whose run a person stopped
// (`session stop`, the console's or Slack's stop): the run did not fail,
// and it did not finish either.
const ExitStopped = 8

type ExitError struct {
	Code int
	Msg  string
	// diagnostics, when set, are the problems behind it (with --json they
	// go into the error object; without, the command printed them).
	diagnostics []matrix.Diagnostic
}

func (e *ExitError) Error() string { return e.Msg }

// usageError marks a wrong invocation (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func UsageErrorf(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

func IsUsageError(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}
