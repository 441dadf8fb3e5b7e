package local

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/runner"
)

// Agent states as recorded (the status is derived from them and the run).
const (
	stateCreating = "creating"
	stateReady    = "ready"
	stateFailed   = "failed"
	stateDeleting = "deleting"
)

// agentRecord is agent.json.
type agentRecord struct {
	Name      string          `json:"name"`
	Role      string          `json:"role"`
	Project   string          `json:"project"`
	Spec      string          `json:"spec"`
	CLI       string          `json:"cli"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Workspace fleet.Workspace `json:"workspace"`
	Metadata  map[string]any  `json:"metadata"`
	State     string          `json:"state"`
	// Owner is the process creating or deleting the agent: when a creator
	// dies half-way, the next command rolls the creation back
	// (rollbackCreate); a deleter's agent is failed until deleted again.
	Owner *procRef `json:"owner,omitempty"`
	// Base is the branch the agent's branch was made from: the rollback
	// of a killed creation deletes the branch only if it holds no commit
	// of its own.
	Base string `json:"base,omitempty"`
	// CreateScope marks the processes a creation starts (git, the setup
	// command): they outlive a creator killed with SIGKILL, and the
	// rollback ends them before it removes what they write.
	CreateScope contain.Scope `json:"create_scope,omitzero"`
	Error       string        `json:"error,omitempty"`
	// Sessions holds the last session of each CLI, resumed by the next run.
	Sessions map[string]string `json:"sessions,omitempty"`
	// Runs counts the runs ever started (run IDs are {name}-{n}).
	Runs int `json:"runs"`
	// LastTask is the summary of the latest run that ended (last_task);
	// records written before it was kept have "" and read the history.
	LastTask string `json:"last_task,omitempty"`
	// LastRun is that run as it ended (how, why), for the console's card.
	LastRun *fleet.TaskRun `json:"last_run,omitempty"`
	// ApprovalMode is the agent's runs' ("" = the fleet config's): ask
	// makes them supervised.
	ApprovalMode string `json:"approval_mode,omitempty"`
}

// runRecord is run.json: the current run and what its supervisor needs.
type runRecord struct {
	fleet.TaskRun
	// Supervisor is the process recording the run; Child the agent CLI,
	// leader of its own process group (zero until the supervisor saw it).
	Supervisor procRef `json:"supervisor"`
	Child      procRef `json:"child"`
	// StopRequested is set by stop: the run is recorded stopped.
	StopRequested bool `json:"stop_requested,omitempty"`

	// How to run it (read by the supervisor).
	CLI          string   `json:"cli"`
	Binary       string   `json:"binary,omitempty"`
	Env          []string `json:"env,omitempty"`
	Dir          string   `json:"dir"`
	Model        string   `json:"model,omitempty"`
	Session      string   `json:"session,omitempty"`
	ModelReason  string   `json:"model_reason,omitempty"`
	ApprovalMode string   `json:"approval_mode,omitempty"`
	// Owner is the person who started the run: a supervised run's
	// session is theirs.
	Owner      string        `json:"owner,omitempty"`
	Timeout    time.Duration `json:"timeout"`
	KillGrace  time.Duration `json:"kill_grace,omitempty"`
	PromptFile string        `json:"prompt_file"`
	// SystemPromptFile holds the role's text, the CLI's system prompt (""
	// when the role has none).
	SystemPromptFile string `json:"system_prompt_file,omitempty"`
	// Scope marks every process of the run (package contain): whoever
	// records the run ends them.
	Scope contain.Scope `json:"scope,omitzero"`
	// Starter is the process starting the run, until the supervisor is
	// recorded; HeldBefore says the agent held the run's task before the
	// start claimed it. A start killed before its supervisor was recorded
	// leaves the run with Supervisor zero: the next command gives the task
	// back (unless HeldBefore) and removes the run (rollbackStartLocked).
	Starter    *procRef `json:"starter,omitempty"`
	HeldBefore bool     `json:"held_before,omitempty"`
	// Resume is the interrupted run this run resumes (nil: none).
	Resume *runResume `json:"resume,omitempty"`

	// A run on a matrix task starts from BaseBranch's tip (or the task's
	// change sent back), the commit ReviewStart; when it completes, what
	// it left is recorded as the task's change (package review). ""
	// when the agent's base is no branch: nothing is recorded.
	BaseBranch  string `json:"base_branch,omitempty"`
	ReviewStart string `json:"review_start,omitempty"`
	// ReviewOf is the task whose change a reviewer's run reviews: its end
	// records the verdict.
	ReviewOf string `json:"review_of,omitempty"`
}

// starting says the run is being started by a live process (Start holds
// the agent lock until the supervisor is recorded).
func (r *runRecord) starting() bool {
	return r.Supervisor.PID == 0 && r.Starter != nil && r.Starter.alive()
}

// record is the run as agentrun records it (runs/{run}.result.json): what
// ran for whom; the end is set by Conclude or Interrupted.
func (r *runRecord) record(p paths, name string) *agentrun.Record {
	created := r.CreatedAt
	rec := &agentrun.Record{
		RunID: r.ID, Caller: agentrun.CallerFleet, Agent: "@" + r.AgentName, Actor: r.Source, TaskID: r.TaskID, Summary: r.Summary,
		Status: r.Status, CLI: r.CLI, Binary: r.Binary, Model: r.Model, ModelReason: r.ModelReason, ApprovalMode: r.ApprovalMode,
		Session: r.Session, Timeout: r.Timeout.String(), Dir: r.Dir, Argv: []string{}, Env: runner.RedactEnv(r.Env),
		CreatedAt: &created, StartedAt: r.StartedAt, Scope: r.Scope, LogFile: p.logFile(name, r.ID), Warnings: []string{},
	}
	return rec
}

// status derives the agent's status from its record and its current run.
// run is nil when there is none; a run whose supervisor is gone counts as
// none (the caller records it as interrupted).
func deriveStatus(a *agentRecord, run *runRecord) fleet.Status {
	switch a.State {
	case stateCreating:
		if a.Owner != nil && !a.Owner.alive() {
			return fleet.StatusFailed
		}
		return fleet.StatusPending
	case stateFailed:
		return fleet.StatusFailed
	case stateDeleting:
		return fleet.StatusDeleting
	}
	if run != nil && run.starting() {
		return fleet.StatusStarting
	}
	if run == nil || !run.Supervisor.alive() {
		return fleet.StatusIdle
	}
	switch {
	case run.StopRequested:
		return fleet.StatusStopping
	case run.Child.PID == 0 && (childrenVisible || run.Status != fleet.RunRunning):
		return fleet.StatusStarting // where the CLI cannot be seen, running is busy
	}
	return fleet.StatusBusy
}

// view renders the agent as callers see it.
func view(a *agentRecord, run *runRecord) fleet.Agent {
	st := deriveStatus(a, run)
	out := fleet.Agent{
		Name: a.Name, Status: st, Role: a.Role, Project: a.Project, Spec: a.Spec, CLI: a.CLI,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, Workspace: a.Workspace, Metadata: fleet.MetadataFields{}, Error: a.Error,
	}
	switch {
	case out.Error != "":
	case st == fleet.StatusFailed && a.State == stateCreating:
		out.Error = "the process creating the agent ended before it was ready; delete it and create it again"
	case st == fleet.StatusDeleting && a.Owner != nil && !a.Owner.alive():
		out.Error = "the process deleting the agent ended before it was done; run agent delete " + a.Name + " again to finish"
	}
	var cur *fleet.TaskRun
	if run != nil && (run.Supervisor.alive() || run.starting()) {
		cur = &run.TaskRun
	}
	out.Finish(cur, nil)
	return out
}

// view is the package view with what only the files tell: the latest
// ended run's summary (last_task) and, while no other runs, that run.
func (f *Fleet) view(ctx context.Context, a *agentRecord, run *runRecord) fleet.Agent {
	out := view(a, run)
	if out.Status == fleet.StatusBusy && run != nil {
		// A supervised run that waits for a person: its supervisor's
		// marker says for what.
		if m, ok := waiting.ByRun(f.ws.Root)[run.ID]; ok {
			it := m.Item
			out.Status, out.Waiting = fleet.StatusWaiting, &it
		}
	}
	if out.CurrentRun == nil && a.LastRun != nil {
		last := a.LastRun.Normalized()
		out.LastRun = &last
	}
	if a.LastTask != "" {
		s := a.LastTask
		out.LastTask = &s
	} else if a.Runs > 1 || a.Runs == 1 && run == nil {
		// A record from before last_task was kept: its history says.
		if runs, err := f.finishedRuns(ctx, a.Name); err == nil && len(runs) > 0 {
			s := runs[len(runs)-1].Summary
			out.LastTask = &s
		}
	}
	return out
}
