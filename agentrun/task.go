package agentrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// FinishTask moves the run's task on by how the run ended: REVIEW when it
// completed, BLOCKED otherwise, with the run's reason in the status log,
// by the run's agent (or by, when set: agentinfra recording a run whose
// supervisor died). A status the agent or a person set during the run is
// kept, with a warning in the record. It sets rec.StatusAfter.
func FinishTask(ctx context.Context, ws *workspace.Workspace, rec *Record, by task.Actor, now time.Time) error {
	if rec.TaskID == "" {
		return nil
	}
	if by == "" {
		by = task.Actor(rec.Agent)
	}
	ok := rec.Status == StatusCompleted
	target := task.StatusBlocked
	if ok {
		target = task.StatusReview
	}
	res, err := task.Finish(ctx, ws, rec.TaskID, task.FinishOptions{OK: ok, Reason: rec.Reason, Holder: rec.Agent}, by, now)
	switch {
	case errors.Is(err, matrix.ErrNotFound):
		err = fmt.Errorf("move task %s to %s: it disappeared from the matrix during the run: %w", rec.TaskID, target, err)
	case err != nil:
		err = fmt.Errorf("move task %s to %s: %w", rec.TaskID, target, err)
	case res.There:
		rec.StatusAfter = res.After.Status
		return nil
	case len(res.Changed) == 0:
		rec.StatusAfter = res.After.Status
		if h := task.Holder(res.After); !strings.EqualFold(h, rec.Agent) && h != "" {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("task %s changed during the run (it is %s, held by %s); kept it instead of %s", rec.TaskID, res.After.Status, h, target))
		} else {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("the status was changed to %s during the run; kept it instead of %s", res.After.Status, target))
		}
		return nil
	default:
		rec.StatusAfter = res.After.Status
		return nil
	}
	rec.Warnings = append(rec.Warnings, err.Error())
	return err
}
