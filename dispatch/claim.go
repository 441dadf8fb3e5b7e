package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// Every status change of a dispatch goes through task.UpdateTask, the one
// writer of a task's row: it honours AGENTINFRA_LOCK_TIMEOUT and logs the
// change in the task README's status log.

// Claim moves the task to IN_PROGRESS and adds the @mention, under the matrix
// lock and only while the row may still be dispatched (the check of NewPlan
// is repeated there, so of two dispatchers only one claims the task). When the
// row changed since the plan, the prompt and command are built again from the
// claimed row.
func (p *Plan) Claim(ctx context.Context) error {
	res, err := tasksvc.UpdateTask(ctx, p.ws, p.Task.ID, p.claimUpdate(), p.At, tasksvc.UpdateOptions{
		Force: true, Getenv: p.opts.Getenv,
		Precondition: func(t matrix.Task) error { return refuse(t, p.words, p.opts.Force) },
	})
	if err != nil {
		return err
	}
	p.Outcome.StatusBefore, p.Outcome.StatusAfter = res.Before.Status, res.After.Status
	if err := p.rebuildIfChanged(ctx, res.After); err != nil {
		return p.block(context.WithoutCancel(ctx), err)
	}
	return nil
}

// errMovedDuringRun keeps a status the agent (or a person) set during the run.
var errMovedDuringRun = errors.New("the status was changed during the run")

// finish moves the claimed row to REVIEW (ok) or BLOCKED, unless the agent (or
// a person) already moved it during the run, as the prompt's reporting
// protocol asks: such a status is kept, with a warning.
func (p *Plan) finish(ctx context.Context, ok bool) error {
	status := p.words.review
	if !ok {
		status = p.words.blocked
	}
	var now string
	_, err := tasksvc.UpdateTask(ctx, p.ws, p.Task.ID, matrix.Update{Status: matrix.Str(status)}, p.opts.Now(), tasksvc.UpdateOptions{
		Force: true, Getenv: p.opts.Getenv,
		Precondition: func(t matrix.Task) error {
			if t.Status != p.words.claimed {
				now = t.Status
				return errMovedDuringRun
			}
			return nil
		},
	})
	switch {
	case errors.Is(err, errMovedDuringRun):
		p.Outcome.StatusAfter = now
		p.Outcome.Warnings = append(p.Outcome.Warnings, fmt.Sprintf("the status was changed to %s during the run; kept it instead of %s", now, status))
		return nil
	case errors.Is(err, matrix.ErrNotFound):
		err = fmt.Errorf("move task %s to %s: it disappeared from the matrix during the run: %w", p.Task.ID, status, err)
	case err != nil:
		err = fmt.Errorf("move task %s to %s: %w", p.Task.ID, status, err)
	default:
		p.Outcome.StatusAfter = status
		return nil
	}
	p.Outcome.Warnings = append(p.Outcome.Warnings, err.Error())
	return err
}

// block moves a claimed task to BLOCKED when the dispatch could not even
// start, and returns cause (joined with any failure to move it).
func (p *Plan) block(ctx context.Context, cause error) error {
	p.Outcome.Outcome = OutcomeFailed
	if _, err := tasksvc.UpdateTask(ctx, p.ws, p.Task.ID, matrix.Update{Status: matrix.Str(p.words.blocked)}, p.opts.Now(), tasksvc.UpdateOptions{Force: true, Getenv: p.opts.Getenv}); err != nil {
		return errors.Join(cause, fmt.Errorf("move task %s to BLOCKED: %w", p.Task.ID, err))
	}
	p.Outcome.StatusAfter = p.words.blocked
	return cause
}
