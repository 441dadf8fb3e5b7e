package full

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/execute"
	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// DispatchOptions is what `dispatch` runs with.
type DispatchOptions struct {
	IO        *cli.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string
	// Cwd is what relative --context-file paths are relative to.
	Cwd string

	// Dispatch holds the ID and the flags, as given (a --task-override of
	// "-" is read from stdin when the command runs).
	Dispatch dispatch.Options
	JSON     bool
}

func NewCmdDispatch(f *Factory, runF func(context.Context, *DispatchOptions) error) *cobra.Command {
	o := &DispatchOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv, Cwd: f.Cwd}
	cmd := &cobra.Command{
		Use:   "dispatch ID",
		Short: "Run a task through an agent CLI (gemini, claude, codex) headless and record the outcome",
		Long: `Dispatch a task: assemble its prompt (see 'agentinfra prompt'), pick the model
(see 'agentinfra model'), and run an agent CLI headless with JSON output:

  gemini  gemini --prompt=PROMPT -m MODEL -o stream-json --skip-trust --approval-mode MODE [--resume S]
  claude  claude -p --output-format stream-json --verbose [--model M] [--resume S] -- PROMPT
  codex   codex exec --json --skip-git-repo-check [-m M] [resume S] -- PROMPT

The CLI runs from an argv, never through a shell, in the workspace root, in its
own process group. Before it starts, the task's row goes to IN_PROGRESS with the
mode's @mention, and .agent/tasks/{id}_*/tracking/{timestamp}_dispatch.md gets
the exact prompt, the command (secrets redacted) and the model with the reason.
After it ends, the parsed result (response, session id, tokens, tool calls,
duration, exit code) is appended there and kept as {timestamp}_result.json, and
the row goes to REVIEW on success or BLOCKED on failure, with the reason.

A DONE or IN_PROGRESS task is refused unless --force. --timeout and Ctrl-C kill
the whole process group and are recorded as timed out / canceled. --dry-run
prints what would run (command, environment additions, model and why, prompt
size, then the prompt as it would be sent) and changes nothing. On a terminal,
live progress (tool calls, messages) is shown as short lines on stderr.

The CLIs are looked up in $AGENTINFRA_TOOLS/node_modules/.bin when that is set,
else on $PATH; they use their own credentials (GEMINI_API_KEY, ANTHROPIC_API_KEY,
codex login ...). gemini needs a model: without --model the tier rule picks one;
claude and codex use their default model unless --model or the mode names one.`,
		Example: `  agentinfra dispatch 3f9a1c --dry-run
  agentinfra dispatch 3f9a1c
  agentinfra dispatch 3f9a1c --mode reviewer --context-file internal/fetch.go --timeout 10m
  agentinfra dispatch 3f9a1c --cli claude --model claude-sonnet-4-5 --approval-mode auto_edit
  agentinfra dispatch 3f9a1c --session 079ac098-406f-49bd-a216-6e346cb9fa20 --task-override "Fix the failing test" --force
  agentinfra dispatch 3f9a1c --json | jq '.result.response'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.CompleteTaskIDs(f.Factory),
		RunE: func(cmd *cobra.Command, args []string) error {
			d := &o.Dispatch
			d.ID = args[0]
			d.CLI = strings.ToLower(strings.TrimSpace(d.CLI))
			if d.CLI != "" && !slices.Contains(runner.CLIs, d.CLI) {
				return cli.UsageErrorf("--cli %q: use one of %s", d.CLI, strings.Join(runner.CLIs, ", "))
			}
			if d.ApprovalMode != "" && !slices.Contains(runner.ApprovalModes, d.ApprovalMode) {
				return cli.UsageErrorf("--approval-mode %q: use one of %s", d.ApprovalMode, strings.Join(runner.ApprovalModes, ", "))
			}
			if d.Timeout <= 0 {
				return cli.UsageErrorf("--timeout must be positive (e.g. 30m)")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return dispatchRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Dispatch.Mode, "mode", "", "agent mode to use instead of the task's")
	fl.StringVar(&o.Dispatch.Model, "model", "", "model name (default: the tier rule for gemini, the CLI's default otherwise)")
	fl.StringVar(&o.Dispatch.CLI, "cli", runner.CLIGemini, "agent CLI: "+strings.Join(runner.CLIs, ", "))
	fl.StringVar(&o.Dispatch.TaskOverride, "task-override", "", "instructions that replace the task README ('-' reads stdin)")
	fl.StringArrayVar(&o.Dispatch.ContextFiles, "context-file", nil, "file to include in the prompt, fenced under its path (repeatable)")
	fl.StringVar(&o.Dispatch.Session, "session", "", "continue this session of the CLI (the session id of an earlier result)")
	fl.StringVar(&o.Dispatch.ApprovalMode, "approval-mode", runner.ApprovalDefault, "tool approval: "+strings.Join(runner.ApprovalModes, ", "))
	fl.DurationVar(&o.Dispatch.Timeout, "timeout", dispatch.DefaultTimeout, "kill the agent's process group after this long")
	fl.BoolVar(&o.Dispatch.DryRun, "dry-run", false, "print what would run and change nothing")
	fl.BoolVar(&o.Dispatch.Force, "force", false, "dispatch a task that is DONE or already IN_PROGRESS")
	fl.BoolVar(&o.JSON, "json", false, "print the outcome as JSON: {id, outcome, cli, model, model_reason, argv, env, prompt_bytes, status_before, status_after, tracking_file, result_file, result: {response, session_id, input_tokens, ...}}")
	cli.RegisterFlagCompletion(cmd, "mode", cli.CompleteModes(f.Factory))
	cli.RegisterFlagCompletion(cmd, "cli", cobra.FixedCompletions(runner.CLIs, cli.NoFiles))
	cli.RegisterFlagCompletion(cmd, "approval-mode", cobra.FixedCompletions(runner.ApprovalModes, cli.NoFiles))
	return cmd
}

func dispatchRun(ctx context.Context, o *DispatchOptions) error {
	d := o.Dispatch
	if d.TaskOverride == "-" {
		b, err := io.ReadAll(o.IO.In)
		if err != nil {
			return fmt.Errorf("read --task-override from stdin: %w", err)
		}
		d.TaskOverride = string(b)
	}
	// Context files are relative to the current folder, like any CLI path.
	d.ContextFiles = slices.Clone(d.ContextFiles)
	for i, p := range d.ContextFiles {
		if !filepath.IsAbs(p) {
			d.ContextFiles[i] = filepath.Join(o.Cwd, p)
		}
	}
	d.Now, d.Getenv, d.Actor = o.Now, o.Getenv, string(task.ActorFrom(ctx))
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	var onEvent func(runner.Event)
	if o.IO.IsTTY && !d.DryRun {
		onEvent = progressPrinter(o.IO)
	}
	// A supervised run asks the person at this terminal inline (its
	// requests can be answered from any terminal too); without a terminal
	// to ask on, each request and its outcome are written to stderr as
	// they happen, with the command that answers it.
	if d.ApprovalMode == runner.ApprovalAsk {
		inline := o.IO.InTTY && d.TaskOverride != "-"
		d.OnSupervised = func(sup *supervised.Run) func() {
			if onEvent == nil { // else the progress lines say it
				for _, w := range sup.PolicyWarnings() {
					fmt.Fprintf(o.IO.ErrOut, "agentinfra: warning: %s\n", termsafe.Line(w))
				}
			}
			followCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			if inline {
				lines := lineReader(o.IO.In)
				go func() { defer close(done); inlinePrompt(followCtx, o.IO, ws, sup, lines) }()
			} else {
				go func() { defer close(done); announceSession(followCtx, o.IO.ErrOut, ws, sup) }()
			}
			return func() { stop(); <-done }
		}
	}
	// A supervised run's processes stay below this process whatever they
	// do (setsid, a double fork), as below the fleet's supervisor: a
	// decision from one of them is then refused (contain.InsideRun), and
	// all are ended with the run. This process runs nothing else.
	if d.ApprovalMode == runner.ApprovalAsk && !d.DryRun {
		d.Exclusive = contain.BecomeSubreaper() == nil
	}
	out, runErr := dispatch.Run(ctx, ws, d, onEvent)
	if runErr != nil && out.Outcome == "" {
		return runErr // nothing ran: a plain error
	}
	if o.JSON {
		if err := jsonout.Write(o.IO.Out, out); err != nil {
			return err
		}
	} else {
		printDispatch(o.IO.Out, out)
	}
	if errors.Is(runErr, execute.ErrStopped) {
		cli.PrintWarnings(o.IO, out.Warnings)
		return &cli.ExitError{Code: cli.ExitStopped, Msg: "the run was " + termsafe.Line(out.Reason)}
	}
	if runErr != nil {
		return &cli.ExitError{Code: 1, Msg: dispatchErrorText(runErr)}
	}
	cli.PrintWarnings(o.IO, out.Warnings)
	return nil
}

// progressPrinter shows an agent's events as short lines on stderr, each
// cut to the terminal's width.
func progressPrinter(ios *cli.IOStreams) func(runner.Event) {
	var mu sync.Mutex
	width := ios.Width
	if width <= 0 {
		width = 100
	}
	return func(e runner.Event) {
		mu.Lock()
		defer mu.Unlock()
		line := termsafe.Line(e.String()) // the tool's input is the agent's
		if r := []rune(line); len(r) > width-3 && width > 20 {
			line = string(r[:width-4]) + "…"
		}
		fmt.Fprintln(ios.ErrOut, "· "+line)
	}
}

// dispatchErrorText keeps the first line and the stderr excerpt of a run error.
func dispatchErrorText(err error) string {
	s := err.Error()
	for _, p := range []error{runner.ErrAgentFailed, runner.ErrCanceled, runner.ErrTimedOut} {
		if errors.Is(err, p) {
			s = strings.TrimPrefix(s, p.Error()+": ")
		}
	}
	return s
}

func printDispatch(w io.Writer, o dispatch.Outcome) {
	model := o.Model
	if model == "" {
		model = "(CLI default)"
	}
	if o.DryRun {
		fmt.Fprintf(w, "dry run: nothing was changed or started\n")
		fmt.Fprintf(w, "task:    %s (%s)\n", o.ID, o.StatusBefore)
		bin := o.Binary
		if bin == "" {
			bin = "NOT FOUND"
		}
		fmt.Fprintf(w, "cli:     %s (%s)\n", o.CLI, bin)
		fmt.Fprintf(w, "mode:    %s\n", dispatchOrNone(o.Mode))
		fmt.Fprintf(w, "model:   %s — %s\n", model, o.ModelReason)
		fmt.Fprintf(w, "command: %s\n", runner.DisplayArgv(o.Argv))
		if len(o.Env) > 0 {
			fmt.Fprintf(w, "env:     %s\n", strings.Join(o.Env, " "))
		}
		var parts []string
		for _, p := range o.PromptParts {
			label := p.Kind + " " + p.Name
			if p.Name == p.Kind {
				label = p.Kind
			}
			parts = append(parts, fmt.Sprintf("%s %d", label, p.Bytes))
		}
		where := "as an argument"
		if o.Stdin {
			where = "on stdin"
		}
		fmt.Fprintf(w, "prompt:  %d bytes %s (%s)\n", o.PromptBytes, where, strings.Join(parts, ", "))
		fmt.Fprintf(w, "timeout: %s, approval mode %s\n", o.Timeout, o.ApprovalMode)
		fmt.Fprintf(w, "would set: %s → IN_PROGRESS, then REVIEW or BLOCKED\n", o.StatusBefore)
		fmt.Fprintf(w, "\nprompt, as it would be sent:\n\n%s\n", strings.TrimRight(o.Prompt, "\n"))
		return // warnings follow on stderr
	}
	fmt.Fprintf(w, "dispatched %s to %s (model %s): %s\n", o.ID, o.CLI, model, o.Outcome)
	fmt.Fprintf(w, "status:   %s → %s\n", o.StatusBefore, o.StatusAfter)
	if o.Outcome != agentrun.OutcomeSuccess && o.Reason != "" {
		// Who stopped it and why, or what the CLI said when it failed.
		fmt.Fprintf(w, "reason:   %s\n", termsafe.Text(o.Reason))
	}
	if r := o.Result; r != nil {
		fmt.Fprintf(w, "session:  %s\n", dispatchOrNone(r.SessionID))
		fmt.Fprintf(w, "usage:    %d input tokens, %d output tokens, %d tool calls, %s, exit %d\n",
			r.InputTokens, r.OutputTokens, r.ToolCalls, (time.Duration(r.DurationMS) * time.Millisecond).String(), r.ExitCode)
	}
	fmt.Fprintf(w, "tracking: %s\n", o.TrackingFile)
	fmt.Fprintf(w, "result:   %s\n", o.ResultFile)
	if r := o.Result; r != nil && r.Response != "" {
		fmt.Fprintf(w, "\n%s\n", termsafe.Text(strings.TrimRight(r.Response, "\n")))
	}
}

func dispatchOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
