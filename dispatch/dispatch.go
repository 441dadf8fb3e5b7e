// Package dispatch runs one matrix task through an agent CLI and brings the
// outcome back into the matrix and the task folder, in four phases:
//
//   - NewPlan decides everything without writing anything: it loads the task,
//     checks that it may be dispatched, picks the model, assembles the prompt
//     as it will be sent (the row as the claim leaves it: IN_PROGRESS, with
//     the mode's @mention) and builds the agent command, once. A dry run is
//     the plan.
//   - Plan.Claim moves the row to IN_PROGRESS through the task service
//     (scaffold.UpdateTask: lock timeout, README status log) only while it is
//     still dispatchable, so two dispatchers cannot both take a task.
//   - the run itself is runner.ExecCommand with the planned command.
//   - the record: tracking/{stamp}_dispatch.md (before the run: command,
//     model and why, the exact prompt), the result appended to it and
//     {stamp}_result.json, and the row moved to REVIEW or BLOCKED.
//
// Run strings the phases together. dispatch does not assemble prompts
// (package prompt), start processes or parse CLI output (package runner).
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrRefused is returned when a task may not be dispatched (DONE, already
// IN_PROGRESS, archived) without Force.
var ErrRefused = agenterr.New(agenterr.Refused, "dispatch refused")

// DefaultTimeout bounds a dispatch when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Minute

// Outcome values.
const (
	OutcomeDryRun   = "dry_run"
	OutcomeSuccess  = "success"
	OutcomeFailed   = "failed"
	OutcomeCanceled = "canceled"
	OutcomeTimedOut = "timed_out"
)

// Options are the inputs of one dispatch (the CLI flags and the MCP tool's
// arguments).
type Options struct {
	ID           string
	Mode         string // "" = the task's mode
	Model        string // "" = the tier rule's choice (gemini) or the CLI's default
	CLI          string // gemini (default) | claude | codex
	TaskOverride string
	ContextFiles []string
	Session      string // continue this session of the CLI
	ApprovalMode string // default | auto_edit | yolo
	Timeout      time.Duration
	DryRun       bool
	Force        bool

	// Now is the clock (nil = time.Now); Getenv reads the environment for model
	// and skill lookup (nil = os.Getenv).
	Now    func() time.Time
	Getenv func(string) string
	// Binary, Env, CleanEnv, ExtraArgs and KillGrace go to the runner's Request
	// unchanged (tests point Binary at a stub; Env adds KEY=VALUE entries).
	Binary    string
	Env       []string
	CleanEnv  bool
	ExtraArgs []string
	KillGrace time.Duration
}

// Outcome reports what a dispatch did (or, for a dry run, would do).
type Outcome struct {
	ID           string         `json:"id"`
	DryRun       bool           `json:"dry_run"`
	Outcome      string         `json:"outcome"` // dry_run | success | failed | canceled | timed_out
	CLI          string         `json:"cli"`
	Binary       string         `json:"binary"` // the executable that runs ("" if not found)
	Mode         string         `json:"mode"`
	Model        string         `json:"model"`
	ModelReason  string         `json:"model_reason"`
	ApprovalMode string         `json:"approval_mode"`
	Session      string         `json:"session"` // the session resumed ("" = new)
	Timeout      string         `json:"timeout"`
	Argv         []string       `json:"argv"` // secrets redacted, prompt as a placeholder
	Env          []string       `json:"env"`  // environment additions, secrets redacted
	Stdin        bool           `json:"prompt_on_stdin"`
	PromptBytes  int            `json:"prompt_bytes"`
	PromptParts  []prompt.Part  `json:"prompt_parts"`
	StatusBefore string         `json:"status_before"`
	StatusAfter  string         `json:"status_after"`
	TrackingFile string         `json:"tracking_file"` // workspace-relative, "" for a dry run
	ResultFile   string         `json:"result_file"`
	Warnings     []string       `json:"warnings"`
	Result       *runner.Result `json:"result"` // nil for a dry run
	// Prompt is the exact prompt (not in JSON: it is in the tracking file).
	Prompt string `json:"-"`
}

// Run dispatches one task: NewPlan, then (unless opts.DryRun) Claim, the
// tracking note, the agent run (ctx cancellation and opts.Timeout kill its
// process group), the result and the row's move to REVIEW on success or
// BLOCKED on failure. onEvent receives lifecycle ("dispatch") events and the
// CLI's live events; it is called from one goroutine at a time and never after
// Run returns.
//
// A DONE or IN_PROGRESS task is refused (ErrRefused) unless opts.Force. With
// opts.DryRun nothing is written or run. When the agent run fails, Run returns
// the Outcome (with Result) and an error wrapping runner.ErrAgentFailed,
// ErrCanceled or ErrTimedOut; the matrix and the tracking file are still
// updated, even when ctx was canceled.
func Run(ctx context.Context, ws *workspace.Workspace, opts Options, onEvent func(runner.Event)) (Outcome, error) {
	emit := func(e runner.Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	p, err := NewPlan(ctx, ws, opts)
	if err != nil {
		return p.Outcome, err
	}
	if opts.DryRun {
		return p.Outcome, nil
	}
	if err := p.Claim(ctx); err != nil {
		return p.Outcome, err
	}
	emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s → IN_PROGRESS, %s", p.Task.ID, p.Outcome.StatusBefore, p.Mention)})

	// From here on the row says IN_PROGRESS: whatever happens, record the
	// outcome and move it on, even when ctx is canceled.
	bookCtx, cancelBook := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancelBook()
	rec, err := p.startRecord()
	if err != nil {
		return p.Outcome, p.block(bookCtx, err)
	}

	emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("running %s (model %s)", p.Outcome.CLI, mdtext.Or(p.Outcome.Model, "CLI default"))})
	res, runErr := runner.ExecCommand(ctx, p.Runner, p.Request, p.Command, onEvent)
	p.Outcome.Result = &res
	switch {
	case res.TimedOut:
		p.Outcome.Outcome = OutcomeTimedOut
	case res.Canceled:
		p.Outcome.Outcome = OutcomeCanceled
	case runErr != nil:
		p.Outcome.Outcome = OutcomeFailed
	default:
		p.Outcome.Outcome = OutcomeSuccess
	}

	// The row first (so the files can say where it went), then the files.
	var bookErrs []error
	if err := p.finish(bookCtx, runErr == nil); err != nil {
		bookErrs = append(bookErrs, err)
	}
	bookErrs = append(bookErrs, rec.finish(&p.Outcome)...)
	emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s, now %s", p.Task.ID, p.Outcome.Outcome, p.Outcome.StatusAfter)})
	if runErr != nil {
		return p.Outcome, errors.Join(append([]error{runErr}, bookErrs...)...)
	}
	return p.Outcome, errors.Join(bookErrs...)
}

func getenvOr(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}
