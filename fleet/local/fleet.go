package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options tune a Fleet; the zero value is what the CLI and MCP server use.
type Options struct {
	// SupervisorArgv starts a supervisor; "--root ROOT NAME RUN" is appended.
	// nil means this executable's hidden `agent run-supervisor` command.
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
	// Getenv reads the environment for model choice (nil = the
	// workspace's, the caller's: workspace.Workspace.Getenv).
	Getenv func(string) string
	// Bus receives the fleet's events (nil = events.Default()).
	Bus *events.Bus
	// Executor starts a run's agent CLI in the supervisor (nil =
	// agentrun.Headless; the supervision bridges replace it).
	Executor agentrun.Executor
}

func (f *Fleet) getenv() func(string) string {
	if f.opts.Getenv != nil {
		return f.opts.Getenv
	}
	if f.ws.Getenv != nil {
		return f.ws.Getenv
	}
	return func(string) string { return "" }
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

func (f *Fleet) now() time.Time { return fleet.Timestamp(f.opts.Now()) }

// loadAgent reads an agent's record and current run (nil when none).
func (f *Fleet) loadAgent(name string) (*agentRecord, *runRecord, error) {
	if err := fleet.ValidateName(name); err != nil { // never a path outside the fleet's folder
		return nil, nil, agenterr.WithField(err, "agent_name")
	}
	var a agentRecord
	ok, err := statefile.ReadJSON(f.p.file(name, agentFile), &a)
	if err != nil {
		return nil, nil, unreadableRecord(name, f.p.file(name, agentFile), err)
	}
	if !ok {
		return nil, nil, f.noAgent(name)
	}
	var r runRecord
	ok, err = statefile.ReadJSON(f.p.file(name, runFile), &r)
	if err != nil {
		return nil, nil, unreadableRecord(name, f.p.file(name, runFile), err)
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
	return agenterr.NotFoundf("agent_name", "%s", msg)
}

// errUnreadableRecord marks an agent whose agent.json or run.json cannot be
// read (it does not parse): List leaves that agent out and names it.
var errUnreadableRecord = errors.New("unreadable agent record")

func unreadableRecord(name, path string, err error) error {
	return agenterr.Unavailablef(fmt.Errorf("%w: %w", errUnreadableRecord, err),
		"agent %s's record %s cannot be read: repair the file (it is JSON), or archive the agent with agent delete %s --force (its worktree and branch stay; the name is taken until then)",
		name, path, name)
}

// names lists the agents' folder names, sorted. A name starting with a dot
// is no agent (an agent being created, see Create).
func (f *Fleet) names() ([]string, error) {
	names, _, err := f.listDir()
	return names, err
}

// listDir is names, and whether a folder of an agent being created is
// there (a leftover when no create holds the fleet lock).
func (f *Fleet) listDir() (names []string, staging bool, err error) {
	ents, err := os.ReadDir(f.p.agentsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, e := range ents {
		switch {
		case !e.IsDir():
		case strings.HasPrefix(e.Name(), stagingPrefix):
			staging = true
		case !strings.HasPrefix(e.Name(), "."):
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, staging, nil
}

// current loads an agent and deals first with what a killed process left:
// a creation whose process died is rolled back (and the agent is not
// found), a start killed before its supervisor ran gives its task back,
// and a run whose supervisor died without recording an end is recorded as
// interrupted. What callers see is never a busy agent whose run is gone, a
// name that no agent holds, or a task claimed for a run that never began.
func (f *Fleet) current(ctx context.Context, name string) (*agentRecord, *runRecord, error) {
	a, r, err := f.loadAgent(name)
	if fleet.CodeOf(err) == fleet.CodeNotFound && fleet.ValidateName(name) == nil {
		if settled, serr := f.settleFolder(ctx, name); serr != nil {
			return nil, nil, serr
		} else if settled != "" {
			return nil, nil, agenterr.NotFoundf("agent_name", "no agent %q: %s", name, settled)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if a.State == stateCreating && a.Owner != nil && !a.Owner.alive() {
		done, err := f.rollbackCreate(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if done {
			return nil, nil, agenterr.NotFoundf("agent_name", "no agent %q: its creation was interrupted (the process creating it was killed) and has been rolled back: create it again", name)
		}
		return f.loadAgent(name)
	}
	if err := f.sweepTemps(ctx, name); err != nil {
		return nil, nil, err
	}
	if r == nil || r.Supervisor.alive() || r.starting() {
		return a, r, nil
	}
	err = statefile.WithLock(ctx, f.p.agentLock(name), func() error {
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
	if r.Supervisor.PID == 0 {
		// Under the agent lock, which a start holds from writing the
		// run until its supervisor is recorded: that start was killed.
		return f.rollbackStartLocked(ctx, a, r)
	}
	if r.Child.alive() {
		killGroup(r.Child.PID)
	}
	r.Scope.Kill()
	prev, _ := f.storedRecord(ctx, r.ID)
	if prev != nil && prev.Concluded() {
		// The run ended itself and its supervisor died before booking the
		// end: booked as the run ended (its task moved on as it says, by
		// its agent), not as an interruption.
		if r.ApprovalMode == runner.ApprovalAsk {
			f.withRuns(ctx, func(st *store.Store) error { _, err := supervised.Reap(ctx, f.ws, st); return err })
		}
		return f.finishLocked(ctx, a, r, prev, "")
	}
	rec := r.record(f.p, a.Name)
	reason := fmt.Sprintf("interrupted: the supervisor (pid %d) ended without recording the run", r.Supervisor.PID)
	if r.Supervisor.PID == 0 {
		reason = "interrupted: the supervisor never started"
	}
	rec.Interrupted(reason, f.now())
	if r.StopRequested {
		rec.Outcome, rec.Status, rec.Reason = agentrun.OutcomeStopped, agentrun.StatusStopped, "stopped"
	}
	if prev != nil {
		rec.Argv, rec.Result = prev.Argv, prev.Result // what the supervisor saved as the run began
	}
	if r.ApprovalMode == runner.ApprovalAsk {
		// A supervised run's session (and its pending request) ends with
		// it: interrupted, as every session of a dead supervisor.
		f.withRuns(ctx, func(st *store.Store) error { _, err := supervised.Reap(ctx, f.ws, st); return err })
	}
	return f.finishLocked(ctx, a, r, rec, tasksvc.ActorAgentinfra)
}

// finishLocked ends the current run as rec says, a run its supervisor
// did not execute (reaped, or whose prompt was gone): the matrix task moves
// on (REVIEW or BLOCKED, by the agent, or by when set), endLocked books it
// and the run's end is published (package execute does both for the runs
// it executes). Called under the agent lock.
func (f *Fleet) finishLocked(ctx context.Context, a *agentRecord, r *runRecord, rec *agentrun.Record, by tasksvc.Actor) error {
	now := f.now()
	if rec.EndedAt == nil {
		rec.EndedAt = &now
	}
	taskErr := agentrun.FinishTask(context.WithoutCancel(ctx), f.ws, rec, by, now)
	err := f.endLocked(ctx, a, r, rec, taskErr)
	f.bus().Publish(events.Event{Kind: events.RunEnded, Root: f.ws.Root, Actor: string(by), Agent: fleet.Key(a.Name), TaskID: r.TaskID, RunID: r.ID,
		Text: rec.Outcome + ": " + rec.Reason, After: rec.StatusAfter})
	return err
}

// endLocked books the end of the current run, its task moved on already
// (taskErr says why it could not be): the record is saved with the run's
// history entry (the store's runs table), the CLI's session is kept for the
// next run and run.json goes. Called under the agent lock.
func (f *Fleet) endLocked(ctx context.Context, a *agentRecord, r *runRecord, rec *agentrun.Record, taskErr error) error {
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
	switch {
	case tr.TaskID == "":
	case taskErr != nil:
		// A run that did not start claimed nothing it could work on:
		// BLOCKED says so, as dispatch does for a failure.
		errs = append(errs, fmt.Errorf("move task %s on: %w", tr.TaskID, taskErr))
	default:
		tr.ExitReason += "; task " + tr.TaskID + " is " + rec.StatusAfter
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
	a.UpdatedAt, a.LastTask, a.LastRun = now, tr.Summary, &tr
	if err := statefile.WriteJSON(f.p.file(a.Name, agentFile), a); err != nil {
		errs = append(errs, err)
	}
	if err := os.Remove(f.p.file(a.Name, runFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Show returns one agent.
func (f *Fleet) Show(ctx context.Context, name string) (fleet.Agent, error) {
	a, r, err := f.current(ctx, name)
	if err != nil {
		return fleet.Agent{}, err
	}
	return f.view(ctx, a, r), nil
}

// List returns the agents, sorted by name.
func (f *Fleet) List(ctx context.Context, filter fleet.ListFilter) ([]fleet.Agent, error) {
	if err := fleet.CheckStatusFilter(filter.Status); err != nil {
		return nil, err
	}
	names, staging, err := f.listDir()
	if err != nil {
		return nil, err
	}
	if staging {
		if err := statefile.WithLock(ctx, f.p.fleetLock(), f.sweepStagingLocked); err != nil {
			return nil, err
		}
	}
	out := []fleet.Agent{}
	for _, n := range names {
		if fleet.ValidateName(n) != nil {
			// No agent has this folder's name: someone else's folder.
			fleet.Notify(ctx, fleet.Notice{Agent: n, Unreadable: true, Text: fmt.Sprintf(
				"the folder %s is no agent's (%q is no agent name): it is left out of the list; move it out of the fleet", f.p.agentDir(n), n)})
			continue
		}
		a, r, err := f.current(ctx, n)
		if agenterr.KindOf(err) == agenterr.NotFound {
			continue // deleted meanwhile, or a leftover rolled back
		}
		if errors.Is(err, errUnreadableRecord) {
			// One broken record does not hide the fleet: the others are
			// listed, this one named (and the CLI exits 1).
			fleet.Notify(ctx, fleet.Notice{Agent: n, Text: "agent " + n + " is left out of the list: " + err.Error(), Unreadable: true})
			continue
		}
		if err != nil {
			return nil, err
		}
		v := f.view(ctx, a, r)
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
		cfg, err := fleet.ConfigOf(f.ws)
		if err != nil {
			return nil, err
		}
		if _, err := cfg.Project(filter.Project); err != nil {
			return nil, agenterr.WithField(err, "project_filter")
		}
	}
	return out, nil
}

// The local backend is a Backend whose runs' logs can be read and whose
// changes can be watched.
var (
	_ fleet.Backend   = (*Fleet)(nil)
	_ fleet.LogReader = (*Fleet)(nil)
	_ fleet.Watcher   = (*Fleet)(nil)
)
