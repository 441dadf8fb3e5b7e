// Package dispatch runs one matrix task through an agent CLI, synchronously,
// and brings the outcome back into the matrix and the task folder. It is
// the synchronous caller of package agentrun (the fleet's supervisor is the
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
//   - the run itself is agentrun's exec of the planned command: contained
//     (nothing the agent starts outlives it), every event it prints kept in
//     tracking/{stamp}_log.jsonl and published on the bus.
//   - the record: tracking/{stamp}_dispatch.md (before the run: command,
//     model and why, the exact prompt), the result appended to it and
//     {stamp}_result.json (the run's agentrun.Record), and the row moved to
//     REVIEW or BLOCKED with the reason.
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
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
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
	// A supervised run takes its place among the live sessions before the
	// task is claimed: refused (the limit, the sessions holding it), it
	// changes nothing.
	var sup *supervised.Run
	if p.Outcome.ApprovalMode == runner.ApprovalAsk {
		owner := opts.Owner
		if owner == "" {
			owner = supervision.CurrentUser(getenvOr(p.opts.Getenv))
		}
		if sup, err = supervised.Begin(ctx, ws, supervised.Params{Owner: owner, CLI: p.Outcome.CLI, Agent: p.Mention, TaskID: p.Task.ID,
			Title: p.Outcome.Summary, Getenv: getenvOr(p.opts.Getenv)}); err != nil {
			return p.Outcome, fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	stopFollowing := func() {}
	endSession := func(reason string) {
		if sup != nil {
			stopFollowing()
			sup.End(ctx, reason)
		}
	}
	if err := p.Claim(ctx); err != nil {
		endSession("the task could not be claimed: " + err.Error())
		return p.Outcome, err
	}
	emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s → IN_PROGRESS, %s", p.Task.ID, p.Outcome.StatusBefore, p.Mention)})

	// From here on the row says IN_PROGRESS: whatever happens, record the
	// outcome and move it on, even when ctx is canceled — within a minute
	// of the moment it is recorded (however long the run took).
	bookCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	}
	rec, err := p.startRecord()
	if err != nil {
		endSession("the run could not be recorded: " + err.Error())
		bctx, cancel := bookCtx()
		defer cancel()
		return p.Outcome, p.block(bctx, err)
	}
	executor := opts.Executor
	if sup != nil {
		rec.st, executor = sup.Store(), sup
		if err := sup.AttachRun(ctx, p.Outcome.RunID); err != nil {
			p.Outcome.Warnings = append(p.Outcome.Warnings, "the session does not name its run: "+err.Error())
		}
		emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("supervised: session %d; requests the policy does not allow wait for `agentinfra approve ID` / `agentinfra reject ID --reason TEXT`", sup.Session().ID)})
		if opts.OnSupervised != nil {
			if stop := opts.OnSupervised(sup); stop != nil {
				stopFollowing = stop
			}
		}
	} else if st, err := openRunStore(ctx, ws); err == nil {
		rec.st = st
		defer st.Close()
	} else {
		p.Outcome.Warnings = append(p.Outcome.Warnings, "the run's record is only in its result file: "+err.Error())
	}

	emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("running %s (model %s)", p.Outcome.CLI, mdtext.Or(p.Outcome.Model, "CLI default"))})
	run := &agentrun.Run{Record: &p.Outcome.Record, Root: ws.Root, Recorder: rec.recorder(), Executor: executor, Now: p.opts.Now, Exclusive: p.opts.Exclusive}
	res, runErr := run.Exec(ctx, p.Runner, p.Request, p.Command, onEvent)
	p.Outcome.Conclude(res, runErr, false, p.opts.Now().UTC())
	if sup != nil {
		if ses, err := sup.Store().Session(context.WithoutCancel(ctx), sup.Session().ID); err == nil && ses.Status == store.SessionTerminated && ses.EndReason != "" && p.Outcome.Outcome != OutcomeSuccess {
			p.Outcome.Reason = "the session was stopped: " + ses.EndReason // `session stop` said why
		}
	}

	// The row first (so the files can say where it went), then the files.
	var bookErrs []error
	bctx, cancelBook := bookCtx()
	defer cancelBook()
	if err := agentrun.FinishTask(bctx, ws, &p.Outcome.Record, "", p.opts.Now()); err != nil {
		bookErrs = append(bookErrs, err)
	}
	bookErrs = append(bookErrs, rec.finish(&p.Outcome)...)
	endSession(p.Outcome.Outcome + ": " + p.Outcome.Reason)
	run.Ended()
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
