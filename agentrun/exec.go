package agentrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/runner"
)

// Executor starts a run's agent CLI and reads the events it prints, until
// it ends. Headless is the runner's one-shot headless mode; the
// supervision issue's bridges (a CLI's own permission protocol over its
// stdin and stdout) implement the same and replace it per run. An Executor
// starts the CLI with req.Env, which carries the run's marker.
type Executor interface {
	Exec(ctx context.Context, r runner.Runner, req runner.Request, cmd runner.Command, onEvent func(runner.Event)) (runner.Result, error)
}

// Headless runs the CLI headless (runner.ExecCommand): its own process
// group, output streamed through bounded windows, killed on timeout or
// cancellation.
type Headless struct{}

// Exec runs cmd with runner.ExecCommand.
func (Headless) Exec(ctx context.Context, r runner.Runner, req runner.Request, cmd runner.Command, onEvent func(runner.Event)) (runner.Result, error) {
	return runner.ExecCommand(ctx, r, req, cmd, onEvent)
}

// Run is one run being executed.
type Run struct {
	Record *Record
	// Root is the workspace's root (the events name it).
	Root string
	// Recorder keeps the record and the log (nil: neither is kept).
	Recorder Recorder
	// Executor starts the CLI (nil = Headless).
	Executor Executor
	// Bus receives the run's events (nil = events.Default()).
	Bus *events.Bus
	// Exclusive says this process runs this run and nothing else (the
	// fleet's supervisor, a child subreaper): when the CLI has ended, every
	// descendant of the process is killed too, even one that cleared its
	// environment (and so its marker).
	Exclusive bool
	// Now is the clock (nil = time.Now).
	Now func() time.Time

	mu  sync.Mutex
	seq int64
	log LogWriter
}

func (r *Run) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Run) bus() *events.Bus {
	if r.Bus != nil {
		return r.Bus
	}
	return events.Default()
}

// Exec runs the command the caller built from req: it marks the run's
// processes (req.Env gets the scope's marker; a new scope when the record
// has none), saves the record as running, writes run_started to the log,
// runs the CLI through the Executor — each event it prints goes to the log,
// the bus and onEvent (from one goroutine, never after Exec returns) —
// writes run_ended, and kills every process of the run's scope that is
// still alive (and, when Exclusive, every descendant of this process). The
// record's end is the caller's to set (Conclude), and to save.
func (r *Run) Exec(ctx context.Context, rn runner.Runner, req runner.Request, cmd runner.Command, onEvent func(runner.Event)) (runner.Result, error) {
	rec := r.Record
	if rec.Scope.Zero() {
		rec.Scope = contain.New(rec.RunID)
	}
	req.Env = append(append([]string{}, req.Env...), rec.Scope.Env())
	start := r.now()
	rec.StartedAt, rec.Status = &start, StatusRunning
	var errs []error
	if r.Recorder != nil {
		if err := r.Recorder.Save(rec); err != nil {
			errs = append(errs, fmt.Errorf("save the run's record: %w", err))
		}
		lw, err := r.Recorder.Log(rec)
		if err != nil {
			errs = append(errs, err)
		}
		r.log = lw
	}
	r.bus().Publish(events.Event{Kind: events.RunStarted, Root: r.Root, Actor: rec.Actor, Agent: rec.agentName(), TaskID: rec.TaskID, RunID: rec.RunID, Text: rec.Summary})
	r.item(events.RunItem{Kind: ItemStarted, Text: rec.Summary})

	x := r.Executor
	if x == nil {
		x = Headless{}
	}
	res, err := x.Exec(ctx, rn, req, cmd, func(e runner.Event) {
		r.item(events.RunItem{Kind: e.Kind, Tool: e.Tool, Text: e.Text, SessionID: e.SessionID})
		if onEvent != nil {
			onEvent(e)
		}
	})
	// Nothing the agent started outlives its run.
	killed := rec.Scope.Kill()
	if r.Exclusive {
		killed += contain.KillDescendants()
	}
	end := fmt.Sprintf("exit code %d", res.ExitCode)
	switch {
	case res.Stopped != "":
		end = "stopped: " + res.Stopped
	case res.Error != "":
		end += ": " + res.Error
	}
	if killed > 0 {
		end += fmt.Sprintf(" (%d process(es) the agent left were killed)", killed)
	}
	r.item(events.RunItem{Kind: ItemEnded, Text: end})
	if r.log != nil {
		if cerr := r.log.Close(); cerr != nil {
			errs = append(errs, cerr)
		}
		r.log = nil
	}
	if len(errs) > 0 {
		rec.Warnings = append(rec.Warnings, errors.Join(errs...).Error())
	}
	return res, err
}

// item numbers one log item, appends it to the log and publishes it.
func (r *Run) item(it events.RunItem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	it.Seq, it.Time = r.seq, r.now()
	if r.log != nil {
		r.log.Append(it) // a full disk must not stop the run: the record says what it can
	}
	rec := r.Record
	r.bus().Publish(events.Event{Kind: events.RunEvent, Root: r.Root, Agent: rec.agentName(), TaskID: rec.TaskID, RunID: rec.RunID, Run: &it})
}

// Ended publishes the end of the run (after the caller recorded it).
func (r *Run) Ended() {
	rec := r.Record
	r.bus().Publish(events.Event{Kind: events.RunEnded, Root: r.Root, Actor: rec.Actor, Agent: rec.agentName(), TaskID: rec.TaskID, RunID: rec.RunID,
		Text: rec.Outcome + ": " + rec.Reason, After: rec.StatusAfter})
}

// agentName is the run's agent without its @: a fleet agent's name, or
// the mode a dispatch ran as (events name agents so).
func (r *Record) agentName() string { return strings.TrimPrefix(r.Agent, "@") }
