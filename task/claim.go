package task

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Claim makes agent the holder of task id: the status becomes IN_PROGRESS
// and agent the last @mention of Agents, with the README status log line.
// It is a compare-and-set under the matrix lock, so of many agents claiming
// one task at once exactly one wins. It succeeds for a TODO task, and for an
// IN_PROGRESS task already held by agent (changing nothing). Otherwise it is
// refused with a *matrix.RefusedError matching ErrClaimed: Holder names the
// agent holding an IN_PROGRESS task (the last @mention of its Agents; "" when
// it names none), Reason says the status.
func Claim(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) (UpdateResult, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return UpdateResult{}, err
	}
	return modifyTask(ctx, ws, id, now, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		holder := ""
		if n := len(before.Agents); n > 0 {
			holder = before.Agents[n-1]
		}
		switch {
		case before.Status == "TODO":
		case before.Status == "IN_PROGRESS" && strings.EqualFold(holder, mention):
			return before, nil // already ours: nothing to write
		case before.Status == "IN_PROGRESS" && holder != "":
			return matrix.Task{}, &matrix.RefusedError{Err: ErrClaimed, Holder: holder,
				Reason: fmt.Sprintf("task %s is IN_PROGRESS, held by %s", id, holder)}
		default:
			return matrix.Task{}, &matrix.RefusedError{Err: ErrClaimed,
				Reason: fmt.Sprintf("task %s is %s; only a TODO task can be claimed", id, before.Status)}
		}
		u := matrix.Update{Status: matrix.Str("IN_PROGRESS")}
		if i := indexFold(before.Agents, mention); i < 0 {
			u.AddAgents = []string{mention}
		} else if i < len(before.Agents)-1 {
			// Already named: move it last, where the holder is read from.
			agents := append(append([]string{}, before.Agents[:i]...), before.Agents[i+1:]...)
			u.Set = map[string]string{matrix.ColAgents: strings.Join(append(agents, before.Agents[i]), " ")}
		}
		return d.UpdateTask(id, u, now)
	})
}

func indexFold(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}
