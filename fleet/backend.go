package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// Backend is where a fleet's agents run: this machine (*Fleet, the local
// backend: git worktrees and supervised CLI processes) or a Coder
// deployment (one workspace an agent). The CLI and the MCP server speak
// only to a Backend, so both backends show the same model, results and
// error codes.
type Backend interface {
	// Create makes a named agent and starts it on its spec.
	Create(ctx context.Context, in CreateInput) (Agent, error)
	// List returns the agents, sorted by name.
	List(ctx context.Context, filter ListFilter) ([]Agent, error)
	// Show returns one agent.
	Show(ctx context.Context, name string) (Agent, error)
	// Start gives an idle agent a task (a busy one is refused, 409).
	Start(ctx context.Context, in StartInput) (StartResult, error)
	// Stop ends an agent's current run and returns it.
	Stop(ctx context.Context, name string) (TaskRun, error)
	// Delete stops an agent and removes its workspace.
	Delete(ctx context.Context, name string, force bool) (DeleteResult, error)
	// History returns one page of an agent's runs, newest first.
	History(ctx context.Context, name string, page, pageSize int) (HistoryPage, error)
	// Roles lists the roles an agent of a project can take.
	Roles(ctx context.Context, project string) ([]Role, error)
	// Projects lists the projects agents can work in.
	Projects(ctx context.Context) ([]Project, error)
	// WithMetadata fills the agents' workspace metadata, running the
	// fields of scope; errors become values, never a failed call.
	WithMetadata(ctx context.Context, agents []Agent, scope metadata.Scope)
}

// StopAgent stops an agent's run and reports the agent's status after it:
// stop_agent_task's result in both adapters.
func StopAgent(ctx context.Context, b Backend, name string) (TaskResult, error) {
	tr, err := b.Stop(ctx, name)
	if err != nil {
		return TaskResult{}, err
	}
	st := StatusIdle
	if a, err := b.Show(ctx, name); err == nil {
		st = a.Status
	}
	return NewStopResult(name, tr, st), nil
}

// StartWait bounds how long StartAgent waits for the run to be seen
// running.
const StartWait = 10 * time.Second

// StartAgent gives an agent a task and answers once the run is running
// (the agent busy), has already ended, or wait (StartWait when 0) has
// passed: start_agent_task's result in both adapters. The fleet design
// answers running / busy; a run still starting after the wait says so in
// the message (its status pending, the agent starting).
func StartAgent(ctx context.Context, b Backend, in StartInput, wait time.Duration) (TaskResult, error) {
	r, err := b.Start(ctx, in)
	if err != nil {
		return TaskResult{}, err
	}
	if wait <= 0 {
		wait = StartWait
	}
	name := r.Task.AgentName
	if name == "" {
		name = in.Name
	}
	deadline := time.Now().Add(wait)
	for !r.AgentStatus.Running() || r.Task.Status != RunRunning {
		a, err := b.Show(ctx, name)
		if err != nil {
			break // the start is done; what happens next, show tells
		}
		if a.CurrentRun != nil && a.CurrentRun.ID == r.Task.ID {
			r.Task, r.AgentStatus = *a.CurrentRun, a.Status
		} else if ended := endedRun(ctx, b, name, r.Task.ID); ended != nil {
			r.Task, r.AgentStatus = *ended, a.Status // a short run: over already
			break
		}
		if (r.AgentStatus.Running() && r.Task.Status == RunRunning) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return NewStartResult(name, r), nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	return NewStartResult(name, r), nil
}

// endedRun finds run id in the newest page of the agent's history, ended.
func endedRun(ctx context.Context, b Backend, name, id string) *TaskRun {
	h, err := b.History(ctx, name, 1, 5)
	if err != nil {
		return nil
	}
	for _, t := range h.Tasks {
		if t.ID == id && t.CompletedAt != nil {
			return &t
		}
	}
	return nil
}

// StopEveryRun stops every agent of b that has a run and waits until none
// is starting, busy or stopping, or ctx ends (an agent still being created
// is the creator's to finish). A run is a detached process: whoever
// removes the folders it writes into (a test's temporary folders, a
// workspace being torn down) must end it first.
func StopEveryRun(ctx context.Context, b Backend) error {
	var stopErr error // the last stop that failed, the likely cause of a timeout
	for {
		agents, err := b.List(ctx, ListFilter{})
		if err != nil {
			return err
		}
		var running []string
		for _, a := range agents {
			switch a.Status {
			case StatusBusy, StatusWaiting, StatusStarting, StatusStopping:
				// A run that ended meanwhile is a conflict: fine.
				if _, err := b.Stop(ctx, a.Name); err != nil && CodeOf(err) != CodeConflict {
					stopErr = err
				}
				running = append(running, a.Name)
			}
		}
		if len(running) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("agents %s still running: %w", strings.Join(running, ", "), ctx.Err()), stopErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
