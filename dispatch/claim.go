package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// Every status change of a dispatch is a move of the task lifecycle
// (package task; the finish through agentrun): claim, finish, each a compare-and-set
// under the matrix lock, logged in the task README's status log with the
// agent and the reason.

// claimOptions are dispatch's claim: a BLOCKED or REVIEW task is run again,
// a DONE or IN_PROGRESS one only with --force.
func (p *Plan) claimOptions() tasksvc.ClaimOptions {
	// A resume's claim is the lifecycle's reopen (claimResumed), which
	// checks the task itself.
	return tasksvc.ClaimOptions{Again: true, Force: p.opts.Force || p.opts.Resume != nil}
}

// Claim moves the task to IN_PROGRESS with the mode's @mention as its
// holder, under the matrix lock and only while the row may still be
// dispatched (the check of NewPlan is repeated there, so of two dispatchers
// only one claims the task). When the row changed since the plan, the
// prompt and command are built again from the claimed row.
func (p *Plan) Claim(ctx context.Context) error {
	if p.opts.Resume != nil {
		return p.claimResumed(ctx)
	}
	res, err := tasksvc.ClaimWith(ctx, p.ws, p.Task.ID, p.Mention, p.At, p.claimOptions())
	if err != nil {
		return dispatchRefusal(err)
	}
	p.Outcome.StatusBefore, p.Outcome.StatusAfter = res.Before.Status, res.After.Status
	if err := p.rebuildIfChanged(ctx, res.After); err != nil {
		return p.block(context.WithoutCancel(ctx), err)
	}
	return nil
}

// dispatchRefusal makes the lifecycle's refusal of a claim a dispatch
// refusal (ErrRefused), keeping its reason, holder and override.
func dispatchRefusal(err error) error {
	re := agenterr.As(err)
	if !errors.Is(err, tasksvc.ErrClaimed) || re == nil {
		return err
	}
	return &agenterr.Error{Kind: agenterr.Refused, Err: ErrRefused, Field: "id", Override: "force", Holder: re.Holder, Reason: re.Reason}
}

// block moves a claimed task to BLOCKED when the dispatch could not even
// start, with cause as the reason, and returns cause (joined with any
// failure to move it).
func (p *Plan) block(ctx context.Context, cause error) error {
	rec := &p.Outcome.Record
	rec.Outcome, rec.Status, rec.Reason = OutcomeFailed, agentrun.StatusFailed, cause.Error()
	if err := agentrun.FinishTask(ctx, p.ws, rec, "", p.opts.Now()); err != nil {
		return errors.Join(cause, fmt.Errorf("move task %s to BLOCKED: %w", p.Task.ID, err))
	}
	return cause
}
