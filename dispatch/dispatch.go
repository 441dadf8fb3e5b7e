// Package dispatch runs one matrix task through an agent CLI, synchronously,
// and brings the outcome back into the matrix and the task folder. It is
// the synchronous caller of package execute (the fleet's supervisor is the
// detached one), in four phases:
//
//   - NewPlan decides everything without writing anything: it loads the task,
//     checks that it may be dispatched (the claim's own check), picks the
//     model (agentrun.ChooseModel), assembles the prompt as it will be sent
//     (the row as the claim leaves it: IN_PROGRESS, with the mode's
//     @mention) and builds the agent command, once. A dry run is the plan.
//   - Plan.Claim moves the row to IN_PROGRESS through the task lifecycle
//     (a compare-and-set under the matrix lock, logged in the README), so two
//     dispatchers cannot both take a task.
//   - the run itself is package execute's, of the planned command: a
//     supervised run's session first, contained (nothing the agent starts
//     outlives it), every event it prints kept in tracking/{stamp}_log.jsonl
//     and published on the bus.
//   - the record, dispatch's books of the run (books.go):
//     tracking/{stamp}_dispatch.md (before the run: command, model and why,
//     the exact prompt), the result appended to it and {stamp}_result.json
//     (the run's agentrun.Record), and the row moved to REVIEW or BLOCKED
//     with the reason.
//
// Run strings the phases together. dispatch does not assemble prompts
// (package prompt), start processes or parse CLI output (package runner and
// the CLIs' packages in agentcli).
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/execute"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrRefused is returned when a task may not be dispatched (DONE, already
// IN_PROGRESS, archived) without Force.
var ErrRefused = agenterr.New(agenterr.Refused, "dispatch refused")

// DefaultTimeout bounds a dispatch when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Minute

// Outcome values (a run's outcomes, and the dry run's).
const (
	OutcomeDryRun   = "dry_run"
	OutcomeSuccess  = agentrun.OutcomeSuccess
	OutcomeFailed   = agentrun.OutcomeFailed
	OutcomeCanceled = agentrun.OutcomeCanceled
	OutcomeTimedOut = agentrun.OutcomeTimedOut
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
	// Actor is who dispatches (a person, an agent), kept in the record.
	Actor string

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
	// Executor starts the agent CLI (nil = agentrun.Headless; a
	// supervised run, ApprovalMode ask, uses its session's bridge).
	Executor agentrun.Executor
	// Owner is the person a supervised run's session belongs to (who may
	// decide its requests; "" = $AGENTINFRA_USER or the login name).
	Owner string
	// OnSupervised, when set, is called with a supervised run's session
	// once the task is claimed, before the CLI starts (the terminal's
	// inline prompt follows its requests from there); the function it
	// returns is called when the run has ended, before the session ends.
	OnSupervised func(*supervised.Run) (stop func())
	// Resume, when set, makes the dispatch the resume of the task's
	// interrupted supervised run (resume.go).
	Resume *Resume
	// Exclusive says this process runs this dispatch and nothing else (the
	// dispatch command) and is a child subreaper (contain.BecomeSubreaper):
	// when the CLI has ended every descendant is killed, even one that
	// cleared its environment (agentrun.Run.Exclusive).
	Exclusive bool
}

// Outcome reports what a dispatch did (or, for a dry run, would do): the
// run's record (agentrun.Record, the format the fleet's runs share) with
// the prompt's parts and the dispatch's files. It is the --json output, the
// MCP result and {stamp}_result.json.
type Outcome struct {
	ID     string `json:"id"`
	DryRun bool   `json:"dry_run"`
	agentrun.Record
	PromptParts  []prompt.Part `json:"prompt_parts"`
	TrackingFile string        `json:"tracking_file"` // workspace-relative, "" for a dry run
	ResultFile   string        `json:"result_file"`
	// TaskOverride and ContextFiles are the run's own parts of its prompt
	// (Options'): a resumed run whose CLI cannot continue its session is
	// given the same prompt again.
	TaskOverride string   `json:"task_override,omitempty"`
	ContextFiles []string `json:"context_files,omitempty"`
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
	getenv := getenvOr(p.opts.Getenv)
	x := &execute.Planned{WS: ws, Record: &p.Outcome.Record, Runner: p.Runner, Request: p.Request, Command: p.Command,
		Supervised: p.Outcome.ApprovalMode == runner.ApprovalAsk, Owner: mdtext.Or(opts.Owner, supervision.CurrentUser(getenv)), Getenv: getenv,
		SessionAgent: p.Mention, Executor: opts.Executor, Exclusive: opts.Exclusive, Now: p.opts.Now, OnEvent: onEvent}
	if opts.Resume != nil {
		x.Supervised, x.Resume = true, p.resumeOf()
	}
	b := &books{p: p, x: x, emit: emit}
	x.Books = b
	x.OnSession = func(sup *supervised.Run) func() {
		emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("supervised: session %d; requests the policy does not allow wait for `agentinfra approve ID` / `agentinfra reject ID --reason TEXT`", sup.Session().ID)})
		if opts.OnSupervised != nil {
			return opts.OnSupervised(sup)
		}
		return nil
	}
	err = execute.Run(ctx, x)
	if errors.Is(err, execute.ErrSessionRefused) {
		return p.Outcome, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if b.rec != nil {
		emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s, now %s", p.Task.ID, p.Outcome.Outcome, p.Outcome.StatusAfter)})
	}
	return p.Outcome, err
}

func getenvOr(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}
