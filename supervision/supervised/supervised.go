// Package supervised is a run in approval mode `ask` (dispatch's and the
// fleet's): the session of the store that the run is (its owner, mode,
// CLI, agent, task and run ID, the process that supervises it), the live
// workspace policy, and the Executor that runs the CLI through its bridge
// (package bridge) instead of headless, so that every permission request
// the policy does not allow waits for a person.
//
// A session is the run, not a second record of it: sessions.run_id is the
// run's ID in the runs table. Begin takes a place among the
// max_concurrent_sessions (refused with the limit and the sessions holding
// it), End gives it back. A supervisor that dies (SIGKILL, a crash, a
// reboot) cannot end its session: Reap, which every command that opens
// the store for supervision runs first, finds the sessions whose
// supervising process is gone and interrupts them (their pending request
// too), kills what is left of the run's processes, and moves a dispatch's
// task to BLOCKED with the reason (the fleet's own reap blocks its tasks).
package supervised

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
	"github.com/agentinfra/agentinfra/supervision/policy"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Params describe the run a session is.
type Params struct {
	// Owner is the person who started the run (who may decide its
	// requests, with the config's operators).
	Owner string
	// Mode is where its requests may be answered ("" = the config's).
	Mode   string
	CLI    string
	Agent  string // the fleet agent's name, or dispatch's @mode
	TaskID string
	RunID  string // "" when not known yet (AttachRun)
	Title  string
	// PolicyPaths are the policy's files (zero = policy.DefaultPaths of
	// Getenv, the supervisor's environment, which says where the user's
	// allowlist is).
	PolicyPaths policy.Paths
	Getenv      func(string) string
	// Resume, when set, is the run resumed: its session is taken up again
	// (resume.go) instead of a new one created.
	Resume *Resume
}

// Run is one supervised run's session.
type Run struct {
	ws      *workspace.Workspace
	st      *store.Store
	ses     store.Session
	live    *policy.Live
	stopPol context.CancelFunc
	keep    keepmoving.Config
	resume  *Resume
	// marked closes once the waiting marker is removed (after stopPol).
	marked <-chan struct{}
}

// Begin opens the workspace's store, reaps the sessions of dead
// supervisors, records the session with this process as its supervisor
// and makes it active: a *store.LimitError when max_concurrent_sessions
// are active or paused already (the session is then ended, refused).
func Begin(ctx context.Context, ws *workspace.Workspace, p Params) (*Run, error) {
	conf, err := supervision.LoadConfig(ws)
	if err != nil {
		return nil, err
	}
	keep, err := keepmoving.LoadConfig(ws)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenWorkspace(ctx, ws, supervision.StoreOptions(conf))
	if err != nil {
		return nil, fmt.Errorf("a supervised run needs the workspace's store: %w", err)
	}
	if _, err := Reap(ctx, ws, st); err != nil {
		st.Close()
		return nil, err
	}
	if p.Mode == "" {
		p.Mode = conf.Mode
	}
	var ses store.Session
	if p.Resume != nil {
		ses, err = takeUp(ctx, st, p)
	} else {
		ses, err = st.CreateSession(ctx, store.NewSession{Owner: p.Owner, Workspace: ws.Root, Mode: p.Mode, CLI: p.CLI, RunID: p.RunID,
			Agent: p.Agent, TaskID: p.TaskID, Title: p.Title})
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	me := os.Getpid()
	if err := st.SetSupervisor(ctx, ses.ID, store.Supervisor{PID: me, Start: contain.ProcStart(me)}); err != nil {
		st.Close()
		return nil, err
	}
	active, err := st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: p.Owner, From: []string{store.SessionCreated}})
	if err != nil {
		// A resume refused stays interrupted: it can be resumed later.
		to := store.SessionTerminated
		if p.Resume != nil {
			to = store.SessionInterrupted
		}
		st.SetSessionStatus(context.WithoutCancel(ctx), ses.ID, store.Transition{To: to, By: p.Owner, Reason: "refused: " + err.Error(),
			From: []string{store.SessionCreated}})
		st.Close()
		return nil, err
	}
	paths := p.PolicyPaths
	if paths == (policy.Paths{}) {
		paths = policy.DefaultPaths(ws.Root, p.Getenv)
	}
	pctx, stop := context.WithCancel(context.Background())
	// A policy that cannot be read is said in the session's audit log, at
	// the start and at each reload (every action is then asked).
	var mu sync.Mutex
	said := ""
	auditWarnings := func(p *policy.Policy) {
		mu.Lock()
		defer mu.Unlock()
		if w := strings.Join(p.Warnings, "\n"); w != said {
			said = w
			for _, w := range p.Warnings {
				st.Record(context.Background(), store.Event{SessionID: active.ID, Actor: store.ActorAgentinfra, Surface: store.SurfaceSupervisor,
					Action: "policy_warning", Detail: warningDetail(w)})
			}
		}
	}
	live, _ := policy.Watch(pctx, ws.Root, paths, auditWarnings) // without a watcher the policy is still loaded once
	auditWarnings(live.Current())
	r := &Run{ws: ws, st: st, ses: active, live: live, stopPol: stop, keep: keep, resume: p.Resume}
	r.marked = r.markWaiting(pctx)
	return r, nil
}

// Session is the run's session as it began.
func (r *Run) Session() store.Session { return r.ses }

// Store is the open store (closed by End).
func (r *Run) Store() *store.Store { return r.st }

// Policy is the policy in force now.
func (r *Run) Policy() *policy.Policy { return r.live.Current() }

// PolicyWarnings say what is wrong with the policy in force (a workspace
// policy that does not parse: FILE:LINE:COL: message; every action will be
// asked), as the run began.
func (r *Run) PolicyWarnings() []string { return r.live.Current().Warnings }

func warningDetail(w string) []byte {
	b, _ := json.Marshal(map[string]string{"warning": w})
	return b
}

// AttachRun records the run's ID (dispatch knows it once it claimed the
// task, after the session took its place).
func (r *Run) AttachRun(ctx context.Context, runID string) error {
	r.ses.RunID = runID
	return r.st.AttachRun(ctx, r.ses.ID, runID)
}

// Exec runs the CLI through its bridge (agentrun.Executor): its own
// permission protocol, each request through the policy and, when the
// policy does not allow it, a person. The run is kept moving (package
// keepmoving, the workspace's supervision config): the stall watchdog
// nudges a silent agent, a turn that ends with a question or on an error
// asks the operator (`agentinfra answer`), steering messages
// (`agentinfra steer`) are delivered as the next user message.
// req.Env carries the run's marker. A CLI session to resume (req.Session)
// is not supported by the bridges: the run starts a new conversation — but a
// resumed run (Params.Resume) continues the CLI's own session of the run it
// takes up.
//
// With supervision.checkpoint_before_edit, a checkpoint of the folder the
// CLI runs in (req.Dir: the workspace for dispatch, the agent's worktree
// for the fleet — not the session's workspace root, which a fleet agent
// does not edit) is taken after each edit is approved and before the CLI
// writes it; `agentinfra checkpoint list SESSION` lists it.
//
// A run that keepmoving ends with its task to be blocked (an operator's
// stop with stop_status blocked, an error turn nobody answered, a prompt
// that expired) while the CLI itself succeeded is returned as failed with
// keepmoving's reason, so that dispatch and the fleet block the task and
// say why.
func (r *Run) Exec(ctx context.Context, rn runner.Runner, req runner.Request, cmd runner.Command, onEvent func(runner.Event)) (runner.Result, error) {
	// The CLI and everything it starts are contained (package contain):
	// writes only in req.Dir, the temporary folders and the CLI's own;
	// the workspace's store and the user's config out of sight.
	box := contain.Sandbox{CLI: rn.Name(), Workspace: r.ws.Root}
	if onEvent != nil {
		if w := box.Warning(req.Dir, req.Env); w != "" {
			onEvent(runner.Event{Kind: "warning", Text: w})
		}
		for _, w := range r.PolicyWarnings() {
			onEvent(runner.Event{Kind: "warning", Text: w})
		}
	}
	breq := bridge.Request{CLI: rn.Name(), Prompt: req.Prompt, SystemPrompt: req.SystemPrompt, SystemPromptFile: req.SystemPromptFile, Model: req.Model, Dir: req.Dir,
		Env: append(slices.Clip(req.Env), box.Env()), CleanEnv: req.CleanEnv, Binary: req.Binary, ExtraArgs: req.ExtraArgs}
	if r.resume != nil {
		breq.Resume, breq.PromptIfNew = r.resume.Native, r.resume.PromptIfNew
	}
	// The policy judges paths where the CLI works (a fleet agent's
	// worktree), not the workspace root it may be outside of.
	pol := func() *policy.Policy { return r.live.Current().In(req.Dir) }
	start := func(ctx context.Context, w keepmoving.Watch) (runner.Conversation, error) {
		return agentcli.StartSupervised(ctx, breq, bridge.Options{Store: r.st, Session: r.ses, Policy: pol, OnEvent: w.OnEvent,
			KillGrace: req.KillGrace, BeforeApprovedEdit: w.BeforeApprovedEdit})
	}
	// A database deleted or replaced under the run ends it (watchStore).
	ctx, stop := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); r.watchStore(ctx, stop) }()
	res, out, err := keepmoving.Run(ctx, start, keepmoving.Options{Config: r.keep, Store: r.st, Session: r.ses, CLI: rn.Name(), Model: req.Model,
		Timeout: req.Timeout, OnEvent: onEvent, Root: r.ws.Root, RunID: r.ses.RunID, Agent: r.ses.Agent, TaskID: r.ses.TaskID,
		Checkpoint: r.checkpointOf(req.Dir)})
	stop(nil)
	<-watched
	if serr := storageEnd(ctx); serr != nil {
		res.Canceled, res.TimedOut, res.Error = false, false, serr.Error()
		return res, serr
	}
	return blockedResult(res, out), err
}

// checkpointOf takes the checkpoints of the session's edits in dir, the
// folder its CLI runs in ("" = the workspace root).
func (r *Run) checkpointOf(dir string) func(ctx context.Context, label string) error {
	if dir == "" {
		dir = r.ws.Root
	}
	return func(ctx context.Context, label string) error {
		_, err := checkpoint.Create(ctx, r.st, r.ses.ID, dir, label, store.ActorAgentinfra)
		return err
	}
}

// blockedResult makes a result that looks successful say why keepmoving
// wants its task blocked.
func blockedResult(res runner.Result, out keepmoving.Outcome) runner.Result {
	if out.TaskStatus != "blocked" || !res.OK() {
		return res
	}
	reason := out.Reason
	if reason == "" {
		reason = "the supervised run ended " + out.Ended
	}
	res.Error = "supervision: " + reason // the CLI's exit code stays its own
	return res
}

// End ends the session (terminated, with how the run ended) and closes the
// store. A session a person stopped stays as they left it.
func (r *Run) End(ctx context.Context, reason string) error {
	defer r.st.Close()
	defer func() { r.stopPol(); <-r.marked }()
	_, err := r.st.SetSessionStatus(context.WithoutCancel(ctx), r.ses.ID, store.Transition{To: store.SessionTerminated, By: r.ses.Owner, Reason: reason})
	if errors.Is(err, store.ErrBadTransition) {
		return nil // already ended (stopped by a person, or reaped)
	}
	return err
}

// Reaped is a session whose supervisor had died.
type Reaped struct {
	Session store.Session
	// Killed counts the run's processes that were still alive.
	Killed int
	// Task is the dispatch's task the reap moved on ("" when none), and
	// TaskStatus where to: BLOCKED, or where the run's own end sent it
	// when the run had ended before its supervisor died.
	Task, TaskStatus string
	// Warnings say what could not be done.
	Warnings []string
}

// Reap interrupts the sessions whose supervising process is gone: the
// session and its pending request become interrupted, the run's processes
// left are killed, and a dispatch's run is recorded as failed with its task
// moved to BLOCKED with the reason. A session whose run had ended itself
// (its end stored) before the supervisor died is terminated instead, as
// its supervisor would have: a dispatch's task goes where the run's end
// sends it, and nothing is left to resume. A session whose supervisor is
// not recorded yet (the instant between its creation and SetSupervisor) is
// left.
func Reap(ctx context.Context, ws *workspace.Workspace, st *store.Store) ([]Reaped, error) {
	sups, err := st.LiveSupervisors(ctx)
	if err != nil {
		return nil, err
	}
	var out []Reaped
	for id, sup := range sups {
		if sup.PID == 0 || contain.Alive(sup.PID, sup.Start) {
			continue
		}
		if row, rec := concludedRun(ctx, st, id); rec != nil {
			r, ok, err := endConcluded(ctx, ws, st, id, sup, row, rec)
			if err != nil {
				return out, err
			}
			if ok {
				out = append(out, r)
			}
			continue
		}
		reason := fmt.Sprintf("its supervisor (pid %d) died while the run went on", sup.PID)
		// A compare-and-set from the statuses LiveSupervisors read: of
		// the processes that found the same dead supervisor, the one that
		// moved the session reaps its run and reports it, once.
		ses, err := st.SetSessionStatus(ctx, id, store.Transition{To: store.SessionInterrupted, By: "agentinfra", Surface: store.SurfaceSupervisor, Reason: reason,
			From: []string{store.SessionCreated, store.SessionActive, store.SessionPaused}})
		if errors.Is(err, store.ErrBadTransition) {
			continue // ended meanwhile, or reaped by another process
		}
		if err != nil {
			return out, err
		}
		waiting.Clear(ws.Root, id) // its supervisor cannot
		out = append(out, reapRun(ctx, ws, st, ses, "interrupted: "+reason))
	}
	return out, nil
}

// reapRun ends what is left of an interrupted session's run.
func reapRun(ctx context.Context, ws *workspace.Workspace, st *store.Store, ses store.Session, reason string) Reaped {
	rp := Reaped{Session: ses}
	if ses.RunID == "" {
		return rp
	}
	row, err := st.Run(ctx, ses.RunID)
	if err != nil {
		rp.Warnings = append(rp.Warnings, fmt.Sprintf("the record of run %s: %v", ses.RunID, err))
		return rp
	}
	rec, err := agentrun.RecordOf(row)
	if err != nil {
		rp.Warnings = append(rp.Warnings, err.Error())
		return rp
	}
	if !rec.Scope.Zero() {
		rp.Killed = rec.Scope.Kill()
	}
	if row.Caller != store.CallerDispatch || row.Finished || rec.EndedAt != nil {
		return rp // the fleet's reap records its runs and blocks their tasks
	}
	now := time.Now().UTC()
	rec.Interrupted(reason, now)
	if rec.TaskID != "" {
		if err := agentrun.FinishTask(ctx, ws, rec, tasksvc.ActorAgentinfra, now); err != nil {
			rp.Warnings = append(rp.Warnings, err.Error())
		} else {
			rp.Task, rp.TaskStatus = rec.TaskID, rec.StatusAfter
		}
	}
	// The row keeps the dispatch's whole record (its Outcome): only the
	// end changes.
	if err := agentrun.UpdateStored(ctx, st, row, rec); err != nil {
		rp.Warnings = append(rp.Warnings, err.Error())
	}
	return rp
}

// concludedRun is the stored record of session id's run when the run ended
// itself (nil otherwise, or when it cannot be read: the session is then
// interrupted as any other).
func concludedRun(ctx context.Context, st *store.Store, id int64) (store.RunRow, *agentrun.Record) {
	ses, err := st.Session(ctx, id)
	if err != nil || ses.RunID == "" {
		return store.RunRow{}, nil
	}
	row, err := st.Run(ctx, ses.RunID)
	if err != nil {
		return store.RunRow{}, nil
	}
	rec, err := agentrun.RecordOf(row)
	if err != nil || !rec.Concluded() {
		return store.RunRow{}, nil
	}
	return row, rec
}

// endConcluded terminates session id, whose run ended itself before its
// supervisor sup died (between the run's end and the session's): with the
// run's outcome, what is left of its processes killed, and a dispatch's
// task moved on as the run's end says when the supervisor died before it
// did. ok is false when another process ended the session first.
func endConcluded(ctx context.Context, ws *workspace.Workspace, st *store.Store, id int64, sup store.Supervisor, row store.RunRow, rec *agentrun.Record) (Reaped, bool, error) {
	reason := fmt.Sprintf("%s: %s (its supervisor, pid %d, died before it ended the session)", rec.Outcome, rec.Reason, sup.PID)
	ses, err := st.SetSessionStatus(ctx, id, store.Transition{To: store.SessionTerminated, By: "agentinfra", Surface: store.SurfaceSupervisor, Reason: reason,
		From: []string{store.SessionCreated, store.SessionActive, store.SessionPaused}})
	if errors.Is(err, store.ErrBadTransition) {
		return Reaped{}, false, nil // ended meanwhile, or reaped by another process
	}
	if err != nil {
		return Reaped{}, false, err
	}
	waiting.Clear(ws.Root, id)
	rp := Reaped{Session: ses}
	if !rec.Scope.Zero() {
		rp.Killed = rec.Scope.Kill()
	}
	// A fleet's run is booked by the fleet's reap (its run file is still
	// there); a dispatch's task is moved here, unless the run moved it
	// (FinishTask finds it there).
	if row.Caller != store.CallerDispatch || rec.TaskID == "" {
		return rp, true, nil
	}
	if err := agentrun.FinishTask(ctx, ws, rec, "", time.Now().UTC()); err != nil {
		rp.Warnings = append(rp.Warnings, err.Error())
	} else {
		rp.Task, rp.TaskStatus = rec.TaskID, rec.StatusAfter
	}
	if err := agentrun.UpdateStored(ctx, st, row, rec); err != nil {
		rp.Warnings = append(rp.Warnings, err.Error())
	}
	return rp, true, nil
}
