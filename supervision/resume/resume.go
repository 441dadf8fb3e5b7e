// Package resume restarts a supervised run whose supervisor died (SIGKILL,
// OOM, a reboot): under a new supervisor, on the agent CLI's own session
// (claude --resume, codex thread/resume, gemini session/load — or, when the
// CLI cannot continue it, a new session told what was done), with the same
// session in agentinfra's store and the task back to IN_PROGRESS ("resumed
// by @ana"). A dispatch's run gets a supervisor of its own, detached (the
// hidden `agentinfra session run-resumed`); a fleet agent's run is started
// again by its fleet (local.ResumeRun). What was asked and decided before
// stays in the session: a decision already taken is not asked again
// (bridge, store.TakeDecision).
//
// With supervision.resume: auto, Auto resumes every interrupted run it
// finds (at most supervision.max_resumes times per run): the first
// agentinfra command that finds a dead supervisor (`agentinfra agent list`
// after a reboot) brings the runs back.
package resume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Resumer restarts the runs of interrupted sessions of one workspace.
type Resumer struct {
	WS *workspace.Workspace
	// SupervisorArgv starts the detached supervisor of a dispatch's resumed
	// run, "--root ROOT SESSION" appended; nil = this executable's hidden
	// `session run-resumed`.
	SupervisorArgv []string
	// SupervisorEnv is added to its environment (the resumer's own).
	SupervisorEnv []string
	// Fleet tunes the local fleet whose agents' runs are resumed.
	Fleet local.Options
}

// Func is r.Resume as the supervision service takes it.
func (r *Resumer) Func() supervision.Resumer {
	return func(ctx context.Context, st *store.Store, ses supervision.Session, by string) (supervision.Resumed, error) {
		return r.Resume(ctx, st, ses, by)
	}
}

// Resume restarts interrupted session ses, resumed by the person by.
func (r *Resumer) Resume(ctx context.Context, st *store.Store, ses store.Session, by string) (supervision.Resumed, error) {
	return r.resume(ctx, st, ses, by, false)
}

func (r *Resumer) resume(ctx context.Context, st *store.Store, ses store.Session, by string, auto bool) (supervision.Resumed, error) {
	conf, err := supervision.LoadConfig(r.WS)
	if err != nil {
		return supervision.Resumed{}, err
	}
	rec, err := runOf(ctx, st, ses)
	if err != nil {
		return supervision.Resumed{}, err
	}
	n, _ := st.Resumes(ctx, ses.ID)
	actor, why := reason(by, auto, n+1, conf.MaxResumes)
	me := os.Getpid()
	reopened, err := st.ReopenSession(ctx, ses.ID, store.Reopen{By: by, Surface: store.SurfaceTerminal, Reason: why, Auto: auto, Max: conf.MaxResumes,
		Supervisor: store.Supervisor{PID: me, Start: contain.ProcStart(me)}})
	if err != nil {
		return supervision.Resumed{}, err
	}
	native, err := st.NativeSession(ctx, ses.ID)
	if err != nil {
		return r.undo(ctx, st, reopened, err)
	}
	out := supervision.Resumed{Session: reopened}
	switch rec.Caller {
	case agentrun.CallerFleet:
		done, err := Done(ctx, st, ses, by, auto)
		if err != nil {
			return r.undo(ctx, st, reopened, err)
		}
		run, pid, err := local.New(r.WS, r.Fleet).ResumeRun(ctx, local.ResumeInput{Name: strings.TrimPrefix(rec.Agent, "@"), RunID: rec.RunID,
			Session: ses.ID, Native: native, Message: Message(ses, by, auto), Done: done, By: actor, Why: why, Owner: ses.Owner})
		if err != nil {
			return r.undo(ctx, st, reopened, err)
		}
		out.RunID, out.Supervisor = run.ID, pid
	default:
		pid, err := r.launch(ses.ID, by, auto)
		if err != nil {
			return r.undo(ctx, st, reopened, fmt.Errorf("start the resumed run's supervisor: %w", err))
		}
		out.Supervisor = pid
	}
	// The run's own supervisor records itself as it begins; until then
	// the session names it, not this process, which may be gone by then.
	st.SetSupervisor(ctx, ses.ID, store.Supervisor{PID: out.Supervisor, Start: contain.ProcStart(out.Supervisor)})
	return out, nil
}

// undo puts a session whose resume failed back to interrupted, with why,
// and returns cause.
func (r *Resumer) undo(ctx context.Context, st *store.Store, ses store.Session, cause error) (supervision.Resumed, error) {
	_, err := st.SetSessionStatus(context.WithoutCancel(ctx), ses.ID, store.Transition{To: store.SessionInterrupted, By: store.ActorAgentinfra,
		Surface: store.SurfaceSupervisor, Reason: "the resume failed: " + cause.Error(), From: []string{store.SessionCreated}})
	return supervision.Resumed{Session: ses}, errors.Join(cause, err)
}

// runOf is the run record of an interrupted session, checked for a resume:
// a supervised run of dispatch or the fleet.
func runOf(ctx context.Context, st *store.Store, ses store.Session) (*agentrun.Record, error) {
	if !supervision.Resumable(ses) {
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Err: store.ErrBadTransition, Reason: fmt.Sprintf(
			"session %d is %s: only a session interrupted because its supervisor died can be restarted", ses.ID, ses.Status)}
	}
	row, err := st.Run(ctx, ses.RunID)
	if err != nil {
		return nil, fmt.Errorf("the run of session %d: %w", ses.ID, err)
	}
	rec, err := agentrun.RecordOf(row)
	if err != nil {
		return nil, err
	}
	if rec.ApprovalMode != runner.ApprovalAsk {
		return nil, agenterr.Conflictf("run %s of session %d was not supervised (approval mode %s): there is nothing to resume", rec.RunID, ses.ID, rec.ApprovalMode)
	}
	if rec.Caller != agentrun.CallerFleet && rec.Caller != agentrun.CallerDispatch {
		return nil, agenterr.Conflictf("run %s of session %d was started by %q, which agentinfra cannot resume", rec.RunID, ses.ID, rec.Caller)
	}
	return rec, nil
}

// launch starts the detached supervisor of a dispatch's resumed run and
// returns its pid.
func (r *Resumer) launch(id int64, by string, auto bool) (int, error) {
	argv := r.SupervisorArgv
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return 0, err
		}
		argv = []string{exe, "session", "run-resumed"}
	}
	args := append(append([]string{}, argv[1:]...), "--root", r.WS.Root, "--by", by, strconv.FormatInt(id, 10))
	if auto {
		args = append(args, "--auto")
	}
	cmd := exec.Command(argv[0], args...)
	cmd.Dir = r.WS.Root
	cmd.Env = append(os.Environ(), r.SupervisorEnv...)
	log, err := os.OpenFile(logPath(r.WS, id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	go cmd.Wait() // a long-lived caller (the console) must not keep a zombie
	return pid, nil
}

// Auto resumes, when supervision.resume is auto, every interrupted session
// that may be (see Resumable) and was resumed fewer than
// supervision.max_resumes times. Of processes that find the same session,
// one resumes it (store.ReopenSession's compare-and-set). It returns the
// sessions resumed, and what could not be.
func (r *Resumer) Auto(ctx context.Context, st *store.Store) ([]supervision.Resumed, []error) {
	conf, err := supervision.LoadConfig(r.WS)
	if err != nil || conf.Resume != config.ResumeAuto {
		return nil, nil
	}
	list, err := st.Interrupted(ctx)
	if err != nil {
		return nil, []error{err}
	}
	var out []supervision.Resumed
	var errs []error
	for _, in := range list {
		if !supervision.Resumable(in.Session) || in.Resumes >= conf.MaxResumes || !diedSupervisor(in.Session) {
			continue
		}
		res, err := r.resume(ctx, st, in.Session, store.ActorAgentinfra, true)
		switch {
		case errors.Is(err, store.ErrBadTransition) || errors.Is(err, store.ErrResumeLimit):
			// resumed by another process meanwhile, or at its limit
		case err != nil:
			errs = append(errs, fmt.Errorf("session %d: %w", in.Session.ID, err))
		default:
			out = append(out, res)
		}
	}
	return out, errs
}

// diedSupervisor tells a session interrupted because its supervisor died
// (which auto resumes) from one whose resume was refused or failed (which
// waits for a person).
func diedSupervisor(ses store.Session) bool {
	return strings.Contains(ses.EndReason, "supervisor") && !strings.Contains(ses.EndReason, "the resume failed") && !strings.HasPrefix(ses.EndReason, "refused")
}

// reason is who resumes a run as the task's status log names them, and
// why: "resumed by @ana", or agentinfra's nth automatic resume.
func reason(by string, auto bool, nth, max int) (tasksvc.Actor, string) {
	if auto {
		return tasksvc.ActorAgentinfra, fmt.Sprintf("resumed by agentinfra (supervision.resume: auto, %d of %d)", nth, max)
	}
	return tasksvc.Actor(by), "resumed by " + store.Handle(by)
}
