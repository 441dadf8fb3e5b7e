package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// ResumeInput is the resume of an agent's supervised run whose supervisor
// died: the session (interrupted, reopened for this run by whoever resumes
// it) and what the new run tells the CLI.
type ResumeInput struct {
	Name string // the agent
	// RunID is the run interrupted.
	RunID string
	// Session is the run's session in the store; Native the CLI's own
	// session ("" when the CLI never said).
	Session int64
	Native  string
	// Message is the first prompt of a CLI that continues its session;
	// Done, what was done before, for one that cannot (it gets the
	// interrupted run's prompt and Done).
	Message, Done string
	// By is who resumes it (the status log's actor), Why the status log's
	// reason ("resumed by @ana").
	By  tasksvc.Actor
	Why string
	// Owner is the session's owner.
	Owner string
}

// runResume is what a resumed run's supervisor needs of the run it takes
// up (run.json).
type runResume struct {
	Session int64  `json:"session"`
	Native  string `json:"native,omitempty"`
	// PromptIfNewFile holds the first prompt of a CLI that cannot continue
	// its session.
	PromptIfNewFile string `json:"prompt_if_new_file"`
	// Of is the run interrupted.
	Of string `json:"of"`
}

// ResumeRun starts a run of agent in.Name that resumes its interrupted run
// in.RunID on the CLI's own session: the agent's run of the interrupted one
// is recorded first (its supervisor is gone), the task goes back to
// IN_PROGRESS held by the agent (the lifecycle's reopen, tasksvc.Resume,
// with in.Why), and the new run's supervisor is launched, as agent start
// does. It returns the run and its supervisor's pid. The agent must be idle
// (a run of another task is not interrupted for it).
func (f *Fleet) ResumeRun(ctx context.Context, in ResumeInput) (fleet.TaskRun, int, error) {
	if _, _, err := f.current(ctx, in.Name); err != nil { // records the interrupted run
		return fleet.TaskRun{}, 0, err
	}
	prev, err := f.storedRecord(ctx, in.RunID)
	if err != nil {
		return fleet.TaskRun{}, 0, err
	}
	if prev == nil {
		return fleet.TaskRun{}, 0, agenterr.NotFoundf("run", "agent %s has no run %s in its history: nothing to resume", in.Name, in.RunID)
	}
	var out fleet.TaskRun
	var pid int
	err = statefile.WithLock(ctx, f.p.agentLock(in.Name), func() error {
		a, r, err := f.loadAgent(in.Name)
		if err != nil {
			return err
		}
		if r != nil {
			return agenterr.Conflictf("agent %s has run %s (%s) now: run %s is not resumed over it; stop it first", a.Name, r.ID, deriveStatus(a, r), in.RunID)
		}
		s := &start{f: f, in: fleet.StartInput{Name: a.Name}, source: string(in.By), a: a}
		if err := s.writeRun(); err != nil {
			return err
		}
		s.run.TaskID, s.tr.TaskID, s.tr.Summary = prev.TaskID, prev.TaskID, prev.Summary
		if err := statefile.WriteJSON(s.runPath, s.run); err != nil {
			return s.rollback(ctx, err)
		}
		for _, step := range []func(context.Context) error{
			func(ctx context.Context) error { return s.resumeTask(ctx, in) },
			func(ctx context.Context) error { return s.writeResumeFiles(ctx, in, prev) },
			s.launchSupervisor,
		} {
			if err := step(ctx); err != nil {
				return s.rollbackResume(ctx, in, err)
			}
		}
		out, pid = s.run.TaskRun, s.run.Supervisor.PID
		return nil
	})
	if err == nil {
		f.bus().Publish(events.Event{Kind: events.RunStarted, Root: f.ws.Root, Actor: string(in.By), Agent: fleet.Key(in.Name), RunID: out.ID,
			TaskID: out.TaskID, Text: "resumed " + in.RunID + ": " + out.Summary})
	}
	return out, pid, err
}

// resumeTask moves the run's task back to IN_PROGRESS, held by the agent.
func (s *start) resumeTask(ctx context.Context, in ResumeInput) error {
	if s.run.TaskID == "" {
		return nil
	}
	if _, err := tasksvc.Resume(ctx, s.f.ws, s.run.TaskID, "@"+s.a.Name, in.Why, in.By, s.now); err != nil {
		return err
	}
	s.claimed = true
	return nil
}

// writeResumeFiles writes the resumed run's files (its prompt, the prompt
// of a CLI that cannot continue its session, the role) and the run, which
// the supervisor reads.
func (s *start) writeResumeFiles(ctx context.Context, in ResumeInput, prev *agentrun.Record) error {
	f, a := s.f, s.a
	dir := f.p.runsDir(a.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	promptFile := filepath.Join(dir, s.tr.ID+".prompt.md")
	if err := os.WriteFile(promptFile, []byte(in.Message), 0o644); err != nil {
		return err
	}
	first, _ := os.ReadFile(filepath.Join(dir, prev.RunID+".prompt.md")) // the interrupted run's prompt
	ifNew := filepath.Join(dir, s.tr.ID+".resume.md")
	if err := os.WriteFile(ifNew, []byte(mdtext.TrimBlankLines(string(first))+"\n\n"+in.Done), 0o644); err != nil {
		return err
	}
	systemFile := ""
	if system, err := os.ReadFile(filepath.Join(dir, prev.RunID+".system.md")); err == nil && len(system) > 0 {
		systemFile = filepath.Join(dir, s.tr.ID+".system.md")
		if err := os.WriteFile(systemFile, system, 0o600); err != nil {
			return err
		}
	}
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return err
	}
	s.run = &runRecord{
		TaskRun: s.tr, CLI: a.CLI, Model: prev.Model, ModelReason: "the model of run " + prev.RunID + ", which this run resumes", Binary: f.opts.Binary,
		Dir: a.Workspace.Path, Session: in.Native, Scope: s.run.Scope, ApprovalMode: runner.ApprovalAsk, Owner: in.Owner,
		Timeout: cfg.Timeout, KillGrace: f.opts.KillGrace, PromptFile: promptFile, SystemPromptFile: systemFile,
		Env:     append([]string{"AGENTINFRA_ROOT=" + f.ws.Root, fleet.EnvAgent + "=" + a.Name}, f.opts.Env...),
		Starter: &s.starter, HeldBefore: true,
		Resume: &runResume{Session: in.Session, Native: in.Native, PromptIfNewFile: ifNew, Of: prev.RunID},
	}
	a.Runs++
	a.UpdatedAt = s.now
	if err := statefile.WriteJSON(f.p.file(a.Name, agentFile), a); err != nil {
		return err
	}
	return statefile.WriteJSON(s.runPath, s.run)
}

// rollbackResume undoes a resume that failed after it wrote the run: the
// task it moved back to IN_PROGRESS is BLOCKED again with the reason, the
// run's files and the run go.
func (s *start) rollbackResume(ctx context.Context, in ResumeInput, cause error) error {
	if s.claimed {
		_, err := tasksvc.Block(context.WithoutCancel(ctx), s.f.ws, s.run.TaskID, "the resume of run "+in.RunID+" failed: "+cause.Error(), tasksvc.ActorAgentinfra, s.f.now())
		cause = errors.Join(cause, err)
		s.claimed = false
	}
	os.Remove(filepath.Join(s.f.p.runsDir(s.a.Name), s.tr.ID+".resume.md"))
	return s.rollback(ctx, cause)
}

// resumeOf is the run a resumed run's supervisor takes up: its session, the
// CLI's own, and the first prompt of a CLI that cannot continue it.
func (r *runRecord) resumeOf() (*supervised.Resume, error) {
	if r.Resume == nil {
		return nil, nil
	}
	ifNew, err := os.ReadFile(r.Resume.PromptIfNewFile)
	if err != nil {
		return nil, fmt.Errorf("the resumed run's prompt for a new session is gone: %w", err)
	}
	return &supervised.Resume{Session: r.Resume.Session, Native: r.Resume.Native, PromptIfNew: string(ifNew)}, nil
}
