package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// reviews is the review service of the fleet's workspace, which starts
// this fleet's agents on the changes that wait for them.
func (f *Fleet) reviews() *review.Service {
	return review.NewService(f.ws, review.Options{Now: f.opts.Now, Bus: f.bus(), Fleet: f})
}

// baseBranch is the branch an agent's changes land on: the one its branch
// was made from ("" when that was no branch: a detached HEAD).
func (f *Fleet) baseBranch(a *agentRecord) string {
	base := a.Base
	if base == "" {
		if cfg, err := fleet.ConfigOf(f.ws); err == nil {
			if p, err := cfg.Project(a.Project); err == nil {
				base, _ = p.Base()
			}
		}
	}
	if base == "HEAD" {
		return ""
	}
	return base
}

// prepareBranch puts the agent's branch where a run on a matrix task
// starts (review.PrepareBranch): at the base branch's tip, so that one
// change never carries another task's work, or at the task's change when
// it was sent back. A worktree with work that no change records is
// refused, and the start with it (its task given back): nothing is lost.
func (s *start) prepareBranch(ctx context.Context) error {
	if s.run.TaskID == "" {
		return nil
	}
	base := s.f.baseBranch(s.a)
	if base == "" {
		return nil
	}
	from, err := s.f.reviews().PrepareBranch(ctx, review.BranchInput{Worktree: s.a.Workspace.Path, Branch: s.a.Workspace.Branch, BaseBranch: base, Task: s.run.TaskID})
	if err != nil {
		return fmt.Errorf("agent %s cannot start task %s from %s: %w", s.a.Name, s.run.TaskID, base, err)
	}
	s.run.BaseBranch, s.run.ReviewStart = base, from
	return nil
}

// recordChange is the run's Completed step (package execute): what the
// agent left on its branch becomes the task's change, and its checks run
// (review.checks), the agent still busy, before the task moves to REVIEW.
// What fails is a warning of the run: the task still goes to REVIEW, where
// `review record` can record it by hand.
func (f *Fleet) recordChange(ctx context.Context, name string, run *runRecord, res runner.Result) []string {
	if run.TaskID == "" || run.BaseBranch == "" {
		return nil
	}
	a, _, err := f.loadAgent(name)
	if err != nil {
		return []string{"the change of task " + run.TaskID + " was not recorded: " + err.Error()}
	}
	svc := f.reviews()
	c, err := svc.Record(ctx, review.RecordInput{Task: run.TaskID, Agent: a.Name, Run: run.ID, Worktree: a.Workspace.Path, Branch: a.Workspace.Branch,
		BaseBranch: run.BaseBranch, Start: run.ReviewStart, Summary: run.Summary, FinalMessage: res.Response})
	if err != nil {
		return []string{"the change of task " + run.TaskID + " was not recorded: " + err.Error()}
	}
	if !svc.HasChecks() {
		return nil
	}
	if _, err := svc.Check(ctx, c.Task); err != nil {
		return []string{"the checks of task " + run.TaskID + "'s change did not run: " + err.Error()}
	}
	return nil
}

// afterRun is what follows a run's end, the agent idle again: a
// reviewer's run gives its verdict (review.RecordVerdict), and whatever
// waits for an idle agent — a change sent back, a change to review — is
// given to it (review.DeliverAll), from this run's agent or any other. It
// starts runs as this one ran (its CLI binary, environment and grace);
// what fails goes to the supervisor's log.
func (f *Fleet) afterRun(ctx context.Context, name string, run *runRecord, rec *agentrun.Record) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	next := f.forNextRuns(run)
	svc := next.reviews()
	if run.ReviewOf != "" {
		failed := ""
		if rec.Status != agentrun.StatusCompleted {
			failed = rec.Reason
		}
		message := ""
		if rec.Result != nil {
			message = rec.Result.Response
		}
		res, err := svc.RecordVerdict(ctx, run.ReviewOf, name, run.ID, message, failed)
		if err != nil {
			fmt.Fprintf(os.Stderr, "agentinfra: the verdict of %s on task %s: %v\n", run.ID, run.ReviewOf, err)
		}
		for _, n := range res.Notes {
			fmt.Fprintf(os.Stderr, "agentinfra: task %s: %s\n", run.ReviewOf, n)
		}
	}
	for _, d := range svc.DeliverAll(ctx) {
		if d.Waiting != "" {
			fmt.Fprintf(os.Stderr, "agentinfra: %s of task %s waits for @%s: %s\n", d.Kind, d.Task, d.Agent, d.Waiting)
		}
	}
}

// forNextRuns is the fleet a supervisor starts the next runs with: its
// options, with what the run it executed was started with where they are
// not set (the CLI's binary, the environment added to every run, the kill
// grace), and this executable's supervisor command.
func (f *Fleet) forNextRuns(run *runRecord) *Fleet {
	o := f.opts
	if o.Binary == "" {
		o.Binary = run.Binary
	}
	if o.Env == nil {
		for _, kv := range run.Env {
			k, _, _ := strings.Cut(kv, "=")
			if k != workspace.EnvRoot && k != fleet.EnvAgent {
				o.Env = append(o.Env, kv)
			}
		}
	}
	if o.KillGrace == 0 {
		o.KillGrace = run.KillGrace
	}
	return New(f.ws, o)
}
