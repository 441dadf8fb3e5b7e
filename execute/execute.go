// Package execute executes a planned run of an agent CLI: the one place a
// run's lifecycle is strung together. Its two callers plan the run their own
// way and keep their own books of it (Books): dispatch (Run, synchronously,
// in the caller's process) and the fleet's supervisor (the hidden
// `agentinfra agent run-supervisor`, detached).
//
// The steps, in order:
//
//   - session: a supervised run (approval mode ask) takes its place among
//     the live sessions of the store (package supervised) before anything
//     changes; refused (the limit), it changes nothing it did not hold
//     already;
//   - claim: the caller's claim of the matrix task (dispatch claims it
//     here; the fleet claimed it when it started the run);
//   - open: the caller's books of the run, and the store that keeps its
//     record;
//   - exec: the CLI runs (package agentrun: contained, logged, published),
//     through its bridge when supervised;
//   - completed: the caller's step after a run that completed (Completed:
//     the fleet records the task's change and runs its checks);
//   - end: the record says how the run ended, the task moves on (REVIEW, or
//     BLOCKED with the reason) and the session ends; the caller books the
//     end, and the end is published.
//
// A run that fails before its CLI starts (a refused session of a task
// claimed already, books that could not be opened) is concluded failed and
// ended the same way, as far as it got.
package execute

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrStopped is the error of a run a person stopped (its session stopped
// from a terminal, the web console or Slack): the text says who, how and
// why. Dispatch exits with its own code for it.
var ErrStopped = errors.New("stopped")

// ErrSessionRefused wraps the refusal of a supervised run's session (a
// *store.LimitError when max_concurrent_sessions are live).
var ErrSessionRefused = agenterr.New(agenterr.Refused, "the supervised run was refused")

// Planned is a run ready to execute: decided, its command built.
type Planned struct {
	WS *workspace.Workspace
	// Record is the run's record as planned (its CLI, agent, task, command);
	// the executor sets its start and its end.
	Record *agentrun.Record
	// Runner, Request and Command are the CLI's headless command: Command
	// is what runs (a supervised run gives Request to the CLI's bridge).
	Runner  runner.Runner
	Request runner.Request
	Command runner.Command
	// Supervised runs the CLI through its bridge, in a session of the store
	// that Owner owns (approval mode ask); Getenv is the environment the
	// session reads (where the user's allowlist is).
	Supervised bool
	Owner      string
	Getenv     func(string) string
	// SessionAgent is the agent the session names: the fleet agent's name
	// (its logs are found by it), dispatch's @mode.
	SessionAgent string
	// OnSession, when set, is called with a supervised run's session once
	// the task is claimed and the books are open, before the CLI starts;
	// the function it returns (nil: none) is called when the run has ended,
	// before the session ends.
	OnSession func(*supervised.Run) (stop func())
	// Executor starts the CLI of a run that is not supervised (nil =
	// agentrun.Headless).
	Executor agentrun.Executor
	// Exclusive says this process runs this run and nothing else (the
	// fleet's supervisor): agentrun.Run.Exclusive.
	Exclusive bool
	// Bus receives the run's events (nil = events.Default()); Now is the
	// clock (nil = time.Now).
	Bus *events.Bus
	Now func() time.Time
	// OnEvent receives the CLI's events (from one goroutine at a time,
	// never after Run returns).
	OnEvent func(runner.Event)
	// Completed, when set, is called once the CLI's run has completed (the
	// record concludes it so, barring a stop), before its end is booked and
	// its task moved on: the fleet records the task's change there and runs
	// its checks, the agent still busy. ctx is the run's (a stop cancels
	// it); what it returns goes to the record's warnings.
	Completed func(ctx context.Context, res runner.Result) (warnings []string)
	// Books are the caller's.
	Books Books
	// Resume, when set, makes the run the resume of an interrupted
	// supervised run (resume.go): its session taken up, its CLI continuing
	// its own session.
	Resume *supervised.Resume
	// BooksOpen says the caller's books of the run exist already, its task
	// claimed (the fleet's run file, written when the run started): a run
	// that fails before its CLI starts is booked there. Otherwise the task
	// is claimed and the books opened here (dispatch's tracking note).
	BooksOpen bool
}

// Books are where a caller keeps its runs: dispatch a tracking note and a
// result file beside the task, the fleet its agent's run file and history.
// The executor calls them in this order, each at most once.
type Books interface {
	// Claim takes the run's task once the session took its place (a caller
	// whose books are open claimed it already, and is not asked).
	Claim(ctx context.Context) error
	// Open opens the books of the run about to start and returns what keeps
	// its record and log (in the workspace's store, which the books open,
	// importing the records they kept before it, and close in Close).
	Open(ctx context.Context) (agentrun.Recorder, error)
	// Close books the run's end. It calls end first, which concludes the
	// record (stopped: a person or a manager agent stopped the run), moves
	// the task on and ends the session — unless the run was recorded
	// meanwhile (the fleet: a stop that gave up on its supervisor), which is not
	// ended again.
	Close(ctx context.Context, end func(stopped bool) error) error
}

// execution is one Planned run as far as it got.
type execution struct {
	*Planned
	sup      *supervised.Run
	stopHook func()
	ended    bool // the session ended
	claimed  bool // the task is the run's
	open     bool // the caller's books of the run are open
	started  bool // the CLI was started
	recorder agentrun.Recorder
}

// Run executes p: session, claim, open, exec, conclude and finish, end (see
// the package's doc). The error is the run's (wrapping runner.ErrAgentFailed,
// ErrCanceled or ErrTimedOut), a refusal (ErrSessionRefused, or the claim's),
// or a failure to start, joined with any failure to book the end; p.Record
// says how the run ended. ctx cancellation kills the CLI's process group;
// the end is still booked.
func Run(ctx context.Context, p *Planned) error {
	x := &execution{Planned: p, claimed: p.BooksOpen, open: p.BooksOpen}
	if p.Supervised {
		sup, err := supervised.Begin(ctx, p.WS, supervised.Params{Owner: p.Owner, CLI: p.Record.CLI, Agent: p.SessionAgent,
			TaskID: p.Record.TaskID, RunID: p.Record.RunID, Title: p.Record.Summary, Getenv: p.Getenv, Resume: p.Resume})
		if err != nil {
			return x.fail(ctx, fmt.Errorf("%w: %w", ErrSessionRefused, err))
		}
		x.sup = sup
		if err := x.checkCLI(ctx); err != nil {
			return x.fail(ctx, fmt.Errorf("%w: %w", ErrSessionRefused, err))
		}
	}
	if !x.claimed {
		if err := p.Books.Claim(ctx); err != nil {
			x.endSession(ctx, "the task could not be claimed: "+err.Error())
			return err
		}
		x.claimed = true
	}
	if err := x.openBooks(ctx); err != nil {
		return x.fail(ctx, err)
	}
	run := &agentrun.Run{Record: p.Record, Root: p.WS.Root, Recorder: x.recorder, Executor: p.Executor, Exclusive: p.Exclusive, Bus: p.Bus, Now: p.Now}
	if x.sup != nil {
		run.Executor = x.sup
	}
	x.started = true
	res, runErr := run.Exec(ctx, p.Runner, p.Request, p.Command, p.OnEvent)
	err := x.finish(ctx, res, runErr)
	run.Ended()
	return err
}

// Fail ends a planned run whose books are open without running it: the
// fleet's supervisor, when the run's command cannot be built. cause is the
// reason the record and the task's status log give.
func Fail(ctx context.Context, p *Planned, cause error) error {
	x := &execution{Planned: p, claimed: p.BooksOpen, open: p.BooksOpen}
	return x.fail(ctx, cause)
}

// openBooks opens the caller's books and records the run's ID in its
// session.
func (x *execution) openBooks(ctx context.Context) error {
	rec, err := x.Books.Open(ctx)
	if err != nil {
		return err
	}
	x.recorder, x.open = rec, true
	if x.sup == nil {
		return nil
	}
	// The record is stored before the session names the run: a supervisor
	// that dies from here on leaves a run the reaper settles (its task
	// BLOCKED) and a resume restarts, not a session naming a run the store
	// does not have.
	saveErr := rec.Save(x.Record)
	if saveErr != nil {
		// Then the session does not name the run either (a session naming
		// a run the store lacks is what the order above prevents).
		x.Record.Warnings = append(x.Record.Warnings, "the run's record could not be saved before it started, so its session does not name it (not resumable): "+saveErr.Error())
	}
	if saveErr == nil && x.sup.Session().RunID != x.Record.RunID { // not known when the session began (dispatch), or a resumed run's
		if err := x.sup.AttachRun(ctx, x.Record.RunID); err != nil {
			x.Record.Warnings = append(x.Record.Warnings, "the session does not name its run: "+err.Error())
		}
	}
	if x.OnSession != nil {
		x.stopHook = x.OnSession(x.sup)
	}
	return nil
}

// fail ends a run that could not start, as far as it got, and returns
// cause joined with any failure to book it.
func (x *execution) fail(ctx context.Context, cause error) error {
	if !x.claimed {
		x.endSession(ctx, "refused: "+cause.Error())
		return cause
	}
	res := runner.Result{CLI: x.Record.CLI, Model: x.Request.Model, ExitCode: -1, Argv: []string{}, Error: cause.Error()}
	return x.finish(ctx, res, cause)
}

// finish concludes the run, moves its task on, ends the session and books
// the end (as far as the books are open). From here on the row says
// IN_PROGRESS: whatever happens, the outcome is recorded and the task moved
// on, even when ctx is canceled — within a minute of the moment it is
// recorded (however long the run took).
func (x *execution) finish(ctx context.Context, res runner.Result, runErr error) error {
	if x.Completed != nil && x.open {
		probe := *x.Record
		if probe.Conclude(res, runErr, false, x.now()); probe.Status == agentrun.StatusCompleted {
			x.Record.Warnings = append(x.Record.Warnings, x.Completed(ctx, res)...)
		}
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if res.Stopped != "" {
		// A person stopped the run: that is its end, not what the CLI,
		// ended by the stop, said or failed to say.
		runErr = fmt.Errorf("%w: %s", ErrStopped, res.Stopped)
	}
	end := func(stopped bool) error {
		x.Record.Conclude(res, runErr, stopped, x.now())
		if x.recorder != nil {
			// The conclusion is kept before the task moves: a supervisor
			// that dies from here on leaves a run the reaper ends as it
			// concluded (its task moved on, its session terminated), not
			// one it interrupts. A failure here is the final save's too.
			_ = x.recorder.Save(x.Record)
		}
		var by task.Actor // the run's agent
		if res.StoppedBy != "" {
			by = task.Actor(res.StoppedBy) // the person who stopped it
		}
		err := agentrun.FinishTask(bctx, x.WS, x.Record, by, x.now())
		x.endSession(bctx, x.Record.Outcome+": "+x.Record.Reason)
		return err
	}
	var err error
	if x.open {
		err = x.Books.Close(bctx, end)
	} else {
		err = end(false)
	}
	x.endSession(bctx, "the run was recorded meanwhile") // when end was not called
	return errors.Join(runErr, err)
}

// endSession ends a supervised run's session (after the hook that follows
// it) with reason, once.
func (x *execution) endSession(ctx context.Context, reason string) {
	if x.sup == nil || x.ended {
		return
	}
	x.ended = true
	if x.stopHook != nil {
		x.stopHook()
	}
	if x.Resume != nil && !x.started {
		x.sup.Interrupt(ctx, reason) // a resume that did not start can be tried again
		return
	}
	x.sup.End(ctx, reason)
}

func (x *execution) now() time.Time {
	if x.Now != nil {
		return x.Now().UTC()
	}
	return time.Now().UTC()
}
