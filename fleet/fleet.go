package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options tune a Fleet; the zero value is what the CLI and MCP server use.
type Options struct {
	// SupervisorArgv starts a supervisor; "--root ROOT NAME RUN" is appended.
	// nil means this executable's hidden `agent supervise` command.
	SupervisorArgv []string
	// SupervisorEnv is added to the supervisor's environment.
	SupervisorEnv []string
	// Binary, Env and KillGrace go to every run's agent CLI (tests point
	// Binary at a stub agent).
	Binary    string
	Env       []string
	KillGrace time.Duration
	// StopGrace is how long stop waits after the interrupt before it
	// terminates the run (0 = 3s).
	StopGrace time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Metadata collects the agents' workspace metadata (nil = the
	// process's shared collector, metadata.Shared).
	Metadata *metadata.Collector
	// Getenv reads the environment for model choice (nil = os.Getenv).
	Getenv func(string) string
	// Bus receives the fleet's events (nil = events.Default()).
	Bus *events.Bus
	// Executor starts a run's agent CLI in the supervisor (nil =
	// agentrun.Headless; the supervision bridges replace it).
	Executor agentrun.Executor
}

func (o Options) getenv() func(string) string {
	if o.Getenv == nil {
		return os.Getenv
	}
	return o.Getenv
}

func (f *Fleet) bus() *events.Bus {
	if f.opts.Bus != nil {
		return f.opts.Bus
	}
	return events.Default()
}

// Fleet is the local backend: agents on this machine, in git worktrees.
// It holds no state of its own; every call reads the files.
type Fleet struct {
	ws   *workspace.Workspace
	p    paths
	opts Options
}

// New returns the fleet of a workspace.
func New(ws *workspace.Workspace, opts Options) *Fleet {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Metadata == nil {
		opts.Metadata = metadata.Shared()
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 3 * time.Second
	}
	return &Fleet{ws: ws, p: newPaths(ws), opts: opts}
}

func (f *Fleet) now() time.Time { return f.opts.Now().UTC() }

// loadAgent reads an agent's record and current run (nil when none).
func (f *Fleet) loadAgent(name string) (*agentRecord, *runRecord, error) {
	if err := ValidateName(name); err != nil { // never a path outside the fleet's folder
		var fe *Error
		errors.As(err, &fe)
		return nil, nil, &Error{Code: CodeBadInput, Field: "agent_name", Msg: fe.Msg}
	}
	var a agentRecord
	ok, err := readJSON(f.p.file(name, agentFile), &a)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, f.noAgent(name)
	}
	var r runRecord
	ok, err = readJSON(f.p.file(name, runFile), &r)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return &a, nil, nil
	}
	return &a, &r, nil
}

func (f *Fleet) noAgent(name string) error {
	names, _ := f.names()
	msg := fmt.Sprintf("no agent %q", name)
	if len(names) == 0 {
		msg += ": the fleet has no agents yet"
	} else {
		msg += ": the agents are " + strings.Join(names, ", ")
	}
	return notFound("agent_name", "%s", msg)
}

// names lists the agents' folder names, sorted.
func (f *Fleet) names() ([]string, error) {
	ents, err := os.ReadDir(f.p.agentsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// current loads an agent and, when its run's supervisor died without
// recording an end, records that run as interrupted first: what callers see
// is never a busy agent whose run is gone.
func (f *Fleet) current(ctx context.Context, name string) (*agentRecord, *runRecord, error) {
	a, r, err := f.loadAgent(name)
	if err != nil || r == nil || r.Supervisor.alive() {
		return a, r, err
	}
	err = withLock(ctx, f.p.agentLock(name), func() error {
		a, r, err = f.loadAgent(name)
		if err != nil || r == nil || r.Supervisor.alive() {
			return err
		}
		return f.reapLocked(ctx, a, r)
	})
	if err != nil {
		return nil, nil, err
	}
	return f.loadAgent(name)
}

// reapLocked records a run whose supervisor is gone: whatever is left of
// the agent CLI's process group and of the run's scope (every process that
// carries its marker, setsid or not) is killed, the run is failed
// (interrupted), or stopped when a stop asked for it, and its task moved on
// by agentinfra. Called under the agent lock.
func (f *Fleet) reapLocked(ctx context.Context, a *agentRecord, r *runRecord) error {
	if r.Child.alive() {
		killGroup(r.Child.PID)
	}
	r.Scope.Kill()
	rec := r.record(f.p, a.Name)
	reason := fmt.Sprintf("interrupted: the supervisor (pid %d) ended without recording the run", r.Supervisor.PID)
	if r.Supervisor.PID == 0 {
		reason = "interrupted: the supervisor never started"
	}
	rec.Interrupted(reason, f.now())
	if r.StopRequested {
		rec.Outcome, rec.Status, rec.Reason = agentrun.OutcomeStopped, agentrun.StatusStopped, "stopped"
	}
	if prev, _ := f.storedRecord(ctx, r.ID); prev != nil {
		rec.Argv, rec.Result = prev.Argv, prev.Result // what the supervisor saved as the run began
	}
	if r.ApprovalMode == runner.ApprovalAsk {
		// A supervised run's session (and its pending request) ends with
		// it: interrupted, as every session of a dead supervisor.
		f.withRuns(ctx, func(st *store.Store) error { _, err := supervised.Reap(ctx, f.ws, st); return err })
	}
	return f.finishLocked(ctx, a, r, rec, tasksvc.ActorAgentinfra)
}

// finishLocked ends the current run as rec says: the matrix task moves on
// (REVIEW or BLOCKED, by the agent, or by when set), the record is saved
// with the run's history entry (the store's runs table), the session is
// kept for the next run and run.json goes. Called under the agent lock.
func (f *Fleet) finishLocked(ctx context.Context, a *agentRecord, r *runRecord, rec *agentrun.Record, by tasksvc.Actor) error {
	now := f.now()
	if rec.EndedAt == nil {
		rec.EndedAt = &now
	}
	tr := r.TaskRun
	tr.Status, tr.ExitReason, tr.CompletedAt, tr.ExitCode = rec.Status, rec.Reason, rec.EndedAt, rec.ExitCode
	if rec.SessionID != "" {
		tr.SessionID = rec.SessionID
	}
	if tr.StartedAt == nil {
		tr.StartedAt = &now
	}
	var errs []error
	if tr.TaskID != "" {
		// A run that did not start claimed nothing it could work on:
		// BLOCKED says so, as dispatch does for a failure.
		if err := agentrun.FinishTask(context.WithoutCancel(ctx), f.ws, rec, by, now); err != nil {
			errs = append(errs, fmt.Errorf("move task %s on: %w", tr.TaskID, err))
		} else {
			tr.ExitReason += "; task " + tr.TaskID + " is " + rec.StatusAfter
		}
	}
	// A crash between this save and the removal of run.json leaves a run
	// that is recorded already: saved again, it keeps its place.
	if err := f.saveFinished(ctx, rec, tr); err != nil {
		return errors.Join(append(errs, fmt.Errorf("record run %s: %w", tr.ID, err))...)
	}
	if tr.SessionID != "" {
		if a.Sessions == nil {
			a.Sessions = map[string]string{}
		}
		a.Sessions[r.CLI] = tr.SessionID
	}
	a.UpdatedAt = now
	if err := writeJSON(f.p.file(a.Name, agentFile), a); err != nil {
		errs = append(errs, err)
	}
	if err := os.Remove(f.p.file(a.Name, runFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	f.bus().Publish(events.Event{Kind: events.RunEnded, Root: f.ws.Root, Actor: string(by), Agent: key(a.Name), TaskID: tr.TaskID, RunID: tr.ID,
		Text: rec.Outcome + ": " + tr.ExitReason, After: rec.StatusAfter})
	return errors.Join(errs...)
}

// Show returns one agent.
func (f *Fleet) Show(ctx context.Context, name string) (Agent, error) {
	a, r, err := f.current(ctx, name)
	if err != nil {
		return Agent{}, err
	}
	return view(a, r), nil
}

// ListFilter narrows List; empty fields match everything.
type ListFilter struct {
	Status  string
	Project string
}

// List returns the agents, sorted by name.
func (f *Fleet) List(ctx context.Context, filter ListFilter) ([]Agent, error) {
	if filter.Status != "" && !validStatus(filter.Status) {
		return nil, badInput("status_filter", "unknown status %q: use one of %s", filter.Status, statusNames())
	}
	names, err := f.names()
	if err != nil {
		return nil, err
	}
	out := []Agent{}
	for _, n := range names {
		a, r, err := f.current(ctx, n)
		var fe *Error
		if errors.As(err, &fe) && fe.Code == CodeNotFound {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		v := view(a, r)
		if filter.Status != "" && string(v.Status) != filter.Status {
			continue
		}
		if filter.Project != "" && !strings.EqualFold(v.Project, filter.Project) {
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 && filter.Project != "" {
		// A project no agent has and the configuration does not name is
		// a typo, not an empty fleet.
		cfg, err := LoadConfig(f.ws)
		if err != nil {
			return nil, err
		}
		if _, err := cfg.project(filter.Project); err != nil {
			var fe *Error
			errors.As(err, &fe)
			return nil, &Error{Code: CodeNotFound, Field: "project_filter", Msg: fe.Msg}
		}
	}
	return out, nil
}

func validStatus(s string) bool {
	for _, st := range Statuses {
		if string(st) == s {
			return true
		}
	}
	return false
}

func statusNames() string {
	var s []string
	for _, st := range Statuses {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}
