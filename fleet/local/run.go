package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/supervision"
)

// Start gives an idle agent a task. Under the agent's lock it checks the
// agent is idle (a busy one is refused, 409), writes the run, claims the
// matrix task when there is one (refused, 409, when another agent holds
// it), writes the run's files and launches its supervisor, which runs the
// agent CLI detached. A start that fails gives back what it took.
func (f *Fleet) Start(ctx context.Context, in fleet.StartInput) (fleet.StartResult, error) {
	s, err := f.newStart(ctx, in)
	if err != nil {
		return fleet.StartResult{}, err
	}
	var out fleet.StartResult
	err = statefile.WithLock(ctx, f.p.agentLock(in.Name), func() error {
		if err := s.takeIdleAgent(ctx); err != nil {
			return err
		}
		if err := s.writeRun(); err != nil {
			return err
		}
		for _, step := range []func(context.Context) error{s.giveTask, s.prepareBranch, s.writeRunFiles, s.launchSupervisor} {
			if err := step(ctx); err != nil {
				return s.rollback(ctx, err)
			}
		}
		out = fleet.StartResult{Task: s.run.TaskRun, AgentStatus: deriveStatus(s.a, s.run)}
		return nil
	})
	if err == nil {
		f.bus().Publish(events.Event{Kind: events.RunStarted, Root: f.ws.Root, Actor: out.Task.Source, Agent: fleet.Key(in.Name), RunID: out.Task.ID,
			TaskID: out.Task.TaskID, Text: out.Task.Summary})
	}
	return out, err
}

// start is one Start as far as it got: what it decided and what it wrote,
// which rollback undoes.
type start struct {
	f      *Fleet
	in     fleet.StartInput
	cfg    fleet.Config
	source string
	// Under the agent's lock:
	a       *agentRecord
	role    skills.Mode
	now     time.Time
	tr      fleet.TaskRun
	run     *runRecord
	runPath string
	starter procRef
	claimed bool   // the matrix task was claimed for the run
	prompt  string // the run's prompt
	// difficulty is the claimed task's (the model's tier).
	difficulty string
}

// newStart checks the input (nothing is written when it is refused), reads
// the configuration and settles what a killed command left of the agent
// (404 for an unknown agent; a dead run is recorded).
func (f *Fleet) newStart(ctx context.Context, in fleet.StartInput) (*start, error) {
	if err := fleet.CheckStartInput(in); err != nil {
		return nil, err
	}
	source, err := fleet.CheckSource(in.Source)
	if err != nil {
		return nil, err
	}
	if err := runner.CheckApproval(in.ApprovalMode); err != nil {
		return nil, agenterr.Invalidf("approval_mode", "%v", err)
	}
	if in.Owner == "" {
		in.Owner = supervision.CurrentUser(f.getenv())
	}
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return nil, err
	}
	if _, _, err := f.current(ctx, in.Name); err != nil {
		return nil, err
	}
	return &start{f: f, in: in, cfg: cfg, source: source}, nil
}

// takeIdleAgent loads the agent, refuses one that is not idle, records a
// run whose supervisor died since current() looked, and loads its role.
func (s *start) takeIdleAgent(ctx context.Context) error {
	f := s.f
	a, r, err := f.loadAgent(s.in.Name)
	if err != nil {
		return err
	}
	if st := deriveStatus(a, r); st != fleet.StatusIdle {
		if r != nil && r.Supervisor.alive() {
			return agenterr.Conflictf("agent %s is %s with run %s (%s): wait until it is idle, stop it, or give the task to another agent", a.Name, st, r.ID, r.Summary)
		}
		return agenterr.Conflictf("agent %s is %s, not idle: it cannot take a task now", a.Name, st)
	}
	if r != nil {
		if err := f.reapLocked(ctx, a, r); err != nil {
			return err
		}
	}
	if err := f.sweepTempsLocked(a.Name); err != nil {
		return err
	}
	rolesWS := f.ws
	if p, perr := s.cfg.Project(a.Project); perr == nil {
		rolesWS = p.RolesFrom(f.ws)
	}
	if s.role, err = loadRole(ctx, rolesWS, a.Role); err != nil {
		return agenterr.NotFoundf("role", "the role %s of agent %s is gone (.agent/agents/%s.md): %v", a.Role, a.Name, a.Role, err)
	}
	s.a, s.in.Name = a, a.Name
	return nil
}

// writeRun writes the run first, before the claim and the run's files, and
// names the task before it is claimed: a start killed from here until its
// supervisor is recorded leaves a run without one, which the next command
// rolls back (rollbackStartLocked). A start that fails does the same itself
// (rollback).
func (s *start) writeRun() error {
	a := s.a
	s.now = s.f.now()
	s.tr = fleet.TaskRun{ID: fmt.Sprintf("%s-%d", a.Name, a.Runs+1), AgentName: a.Name, Status: fleet.RunPending, Source: s.source, CreatedAt: s.now}
	s.starter = refOf(os.Getpid())
	s.run = &runRecord{TaskRun: s.tr, CLI: a.CLI, Dir: a.Workspace.Path, Scope: contain.New(s.tr.ID), Starter: &s.starter}
	s.runPath = s.f.p.file(a.Name, runFile)
	return statefile.WriteJSON(s.runPath, s.run)
}

// giveTask claims the matrix task (the one named, or the next ready one)
// or takes the free text, and builds the run's prompt; one the CLI cannot
// take is refused (a claimed task is then given back).
func (s *start) giveTask(ctx context.Context) error {
	a, in := s.a, s.in
	if !in.Next && in.TaskID == "" {
		s.tr.Summary = mdtext.Shorten(in.Text, 120)
		s.prompt = textPrompt(a, in.Text)
		if err := agentcli.CheckPrompt(a.CLI, s.prompt); err != nil {
			return &agenterr.Error{Kind: agenterr.Invalid, Field: "task_description", Reason: "the task is too long for " + a.CLI, Err: err}
		}
		return nil
	}
	intend := func(id string, heldBefore bool) error {
		s.run.TaskID, s.run.HeldBefore = id, heldBefore
		return statefile.WriteJSON(s.runPath, s.run)
	}
	c, err := fleet.ClaimTask(ctx, s.f.ws, in, a.Role, &s.role, s.now, intend)
	if err != nil {
		return err
	}
	s.claimed = true
	hook("start:claimed")
	s.run.TaskID, s.tr.TaskID, s.tr.Summary, s.difficulty = c.Task.ID, c.Task.ID, c.Summary, c.Task.Difficulty
	s.prompt = fleet.WithNote(taskRunPrompt(a, c.Prompt, in.Prompt), in.Note)
	if err := agentcli.CheckPrompt(a.CLI, s.prompt); err != nil {
		// Given back: the agent never ran on it.
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "task_id", Reason: fmt.Sprintf("task %s's prompt is too long for %s; the task is given back", c.Task.ID, a.CLI), Err: err}
	}
	return nil
}

// writeRunFiles chooses the model and writes the prompt, the system prompt
// (the agent's role, for a matrix task too, whose prompt leaves the mode
// out: the runner gives it to the CLI as such), the whole run and the
// agent's count of runs.
func (s *start) writeRunFiles(ctx context.Context) error {
	f, a, in := s.f, s.a, s.in
	model, modelReason, err := agentrun.ChooseModel(ctx, f.ws, a.CLI, a.Role, s.difficulty, "", f.getenv())
	if err != nil {
		return err
	}
	promptFile := filepath.Join(f.p.runsDir(a.Name), s.tr.ID+".prompt.md")
	if err := os.MkdirAll(filepath.Dir(promptFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(promptFile, []byte(s.prompt), 0o644); err != nil {
		return err
	}
	systemFile := ""
	if system := mdtext.TrimBlankLines(s.role.Body); system != "" {
		// In the run's folder, not a temporary one: the agent CLI reads it
		// from there (gemini, claude), and a supervisor killed mid-run
		// leaves nothing in the system's temp folder.
		systemFile = filepath.Join(f.p.runsDir(a.Name), s.tr.ID+".system.md")
		if err := os.WriteFile(systemFile, []byte(system), 0o600); err != nil {
			return err
		}
	}
	s.run = &runRecord{
		TaskRun: s.tr, CLI: a.CLI, Model: model, ModelReason: modelReason, Binary: f.opts.Binary, Dir: a.Workspace.Path, Session: a.Sessions[a.CLI],
		Scope:        s.run.Scope,
		ApprovalMode: mdtext.Or(in.ApprovalMode, mdtext.Or(a.ApprovalMode, s.cfg.ApprovalMode)), Owner: in.Owner, Timeout: s.cfg.Timeout, KillGrace: f.opts.KillGrace, PromptFile: promptFile,
		SystemPromptFile: systemFile,
		Env:              append([]string{"AGENTINFRA_ROOT=" + f.ws.Root, fleet.EnvAgent + "=" + a.Name}, f.opts.Env...),
		Starter:          &s.starter, HeldBefore: s.run.HeldBefore,
		BaseBranch: s.run.BaseBranch, ReviewStart: s.run.ReviewStart, ReviewOf: s.in.ReviewOf,
	}
	a.Runs++
	a.UpdatedAt = s.now
	if err := statefile.WriteJSON(f.p.file(a.Name, agentFile), a); err != nil {
		return err
	}
	return statefile.WriteJSON(s.runPath, s.run)
}

// launchSupervisor launches the run's supervisor and records it in the run.
func (s *start) launchSupervisor(context.Context) error {
	sup, err := s.f.launch(s.a.Name, s.tr.ID)
	if err != nil {
		return agenterr.Unavailablef(err, "could not start the supervisor of agent %s", s.a.Name)
	}
	hook("start:launched")
	s.run.Supervisor = sup
	if err := statefile.WriteJSON(s.runPath, s.run); err != nil {
		killGroup(sup.PID)
		return err
	}
	return nil
}

// rollback undoes a start that failed after it wrote the run: a task it
// claimed (and the agent did not hold before) is given back, the run's
// files and the run go. It returns cause, joined with what could not be
// undone.
func (s *start) rollback(ctx context.Context, cause error) error {
	if s.claimed && !s.run.HeldBefore {
		cause = errors.Join(cause, fleet.ReleaseTask(context.WithoutCancel(ctx), s.f.ws, s.run.TaskID, s.a.Name, s.f.now()))
	}
	for _, suffix := range []string{".prompt.md", ".system.md", ".supervisor.log"} {
		os.Remove(filepath.Join(s.f.p.runsDir(s.a.Name), s.tr.ID+suffix))
	}
	if err := os.Remove(s.runPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		cause = errors.Join(cause, err)
	}
	return cause
}

// taskRunPrompt is the prompt of a run on a matrix task: the task's
// assembled prompt, or, for a change sent back (given), the review's
// prompt alone when the agent's CLI session goes on (it has the task
// already), else after the task's.
func taskRunPrompt(a *agentRecord, assembled, given string) string {
	switch {
	case given == "":
		return assembled + "\n\n" + agentSection(a)
	case a.Sessions[a.CLI] != "":
		return strings.TrimSpace(given) + "\n\n" + agentSection(a)
	}
	return assembled + "\n\n" + agentSection(a) + "\n## Review of your change\n\n" + strings.TrimSpace(given) + "\n"
}

// textPrompt is the prompt of a free-text task: who the agent is, the task
// (its role is the system prompt, apart).
func textPrompt(a *agentRecord, text string) string {
	var b strings.Builder
	b.WriteString(agentSection(a))
	fmt.Fprintf(&b, "\n## Task\n\n%s\n", strings.TrimSpace(text))
	return b.String()
}

// agentSection tells the agent who it is, what it is for and where it works.
func agentSection(a *agentRecord) string {
	return fmt.Sprintf("## You are agent %s\n\nYour standing objective: %s\n\nYou work in the git worktree %s on branch %s; commit your work there. agentinfra commands reach the main workspace's matrix ($AGENTINFRA_ROOT).\n",
		a.Name, strings.TrimSpace(a.Spec), a.Workspace.Path, a.Workspace.Branch)
}

// launch starts the supervisor of a run, detached in its own session, and
// returns it. Called under the agent lock: the supervisor waits for it
// before it reads the run.
func (f *Fleet) launch(name, runID string) (procRef, error) {
	argv := f.opts.SupervisorArgv
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return procRef{}, err
		}
		argv = []string{exe, "agent", "run-supervisor"}
	}
	args := append(append([]string{}, argv[1:]...), "--root", f.ws.Root, name, runID)
	cmd := exec.Command(argv[0], args...)
	cmd.Dir = f.ws.Root
	cmd.Env = append(os.Environ(), f.opts.SupervisorEnv...)
	logf, err := os.OpenFile(filepath.Join(f.p.runsDir(name), runID+".supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return procRef{}, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return procRef{}, err
	}
	ref := refOf(cmd.Process.Pid)
	go cmd.Wait() // a long-lived caller (the MCP server) must not keep a zombie
	return ref, nil
}

// Stop ends the agent's current run: the agent CLI's process group gets an
// interrupt, then a terminate, then a kill; the run is recorded stopped and
// the agent is idle, its CLI session kept for the next task.
func (f *Fleet) Stop(ctx context.Context, name string) (fleet.TaskRun, error) {
	a, r, err := f.current(ctx, name)
	if err != nil {
		return fleet.TaskRun{}, err
	}
	if r == nil {
		return fleet.TaskRun{}, agenterr.Conflictf("agent %s is %s: it has no run to stop", a.Name, deriveStatus(a, r))
	}
	err = statefile.WithLock(ctx, f.p.agentLock(name), func() error {
		a, r, err = f.loadAgent(name)
		if err != nil {
			return err
		}
		if r == nil {
			return agenterr.Conflictf("agent %s finished its run meanwhile: nothing to stop", a.Name)
		}
		r.StopRequested = true
		return statefile.WriteJSON(f.p.file(name, runFile), r)
	})
	if err != nil {
		return fleet.TaskRun{}, err
	}
	runID := r.ID
	grace := r.KillGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	ended := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			var cur runRecord
			ok, _ := statefile.ReadJSON(f.p.file(name, runFile), &cur)
			if !ok || cur.ID != runID || !cur.Supervisor.alive() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The child may not be known yet (the supervisor is starting it): then
	// the supervisor is told, and it ends the run through its context.
	child := func() procRef {
		var cur runRecord
		statefile.ReadJSON(f.p.file(name, runFile), &cur)
		return cur.Child
	}
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, f.opts.StopGrace}, {syscall.SIGTERM, grace}, {syscall.SIGKILL, 2 * time.Second}}
	done := false
	for _, s := range steps {
		if c := child(); c.PID != 0 && c.alive() {
			signalGroup(c.PID, s.sig)
		} else {
			signalProc(r.Supervisor.PID, syscall.SIGTERM)
		}
		if done = ended(s.wait); done {
			break
		}
	}
	if !done {
		// The supervisor does not answer: end it, and record the run here.
		signalGroup(r.Supervisor.PID, syscall.SIGKILL)
		ended(2 * time.Second)
	}
	if _, _, err := f.current(ctx, name); err != nil {
		return fleet.TaskRun{}, err
	}
	return f.lastRun(ctx, name, runID)
}

// lastRun finds a finished run in the history.
func (f *Fleet) lastRun(ctx context.Context, name, runID string) (fleet.TaskRun, error) {
	runs, err := f.finishedRuns(ctx, name)
	if err != nil {
		return fleet.TaskRun{}, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].ID == runID {
			return runs[i], nil
		}
	}
	return fleet.TaskRun{}, fmt.Errorf("run %s of agent %s is not in its history", runID, name)
}

// killGroup kills a process group and the leader (gone is fine).
func killGroup(pid int) {
	signalGroup(pid, syscall.SIGKILL)
	signalProc(pid, syscall.SIGKILL)
}
