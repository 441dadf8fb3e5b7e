package task

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Claim makes agent the holder of task id: the status becomes IN_PROGRESS
// and agent the last @mention of Agents, with the README status log line.
// It is a compare-and-set under the matrix lock, so of many agents claiming
// one task at once exactly one wins. It succeeds for a TODO task, and for an
// IN_PROGRESS task already held by agent (changing nothing). Otherwise it is
// refused with a Conflict *agenterr.Error matching ErrClaimed: Holder names the
// agent holding an IN_PROGRESS task (the last @mention of its Agents; "" when
// it names none), Reason says the status.
func Claim(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) (UpdateResult, error) {
	return ClaimWith(ctx, ws, id, agent, now, ClaimOptions{})
}

// ClaimOptions widens a claim, for dispatch.
type ClaimOptions struct {
	// Also lists statuses besides TODO that may be claimed (dispatch runs
	// BLOCKED and REVIEW tasks again).
	Also []string
	// Force claims the task whatever its status and holder (dispatch --force).
	Force bool
}

// ClaimWith is Claim with options. Without them it is Claim.
func ClaimWith(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time, o ClaimOptions) (UpdateResult, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return UpdateResult{}, err
	}
	return modifyTask(ctx, ws, id, now, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		claimed, err := WorkflowStatus(v, StatusInProgress)
		if err != nil {
			return matrix.Task{}, err
		}
		todo, err := WorkflowStatus(v, StatusTodo)
		if err != nil {
			return matrix.Task{}, err
		}
		claimable := []string{todo}
		for _, s := range o.Also {
			if w, err := WorkflowStatus(v, s); err == nil {
				claimable = append(claimable, w)
			}
		}
		holder := ""
		if n := len(before.Agents); n > 0 {
			holder = before.Agents[n-1]
		}
		switch {
		case o.Force && !(before.Status == claimed && strings.EqualFold(holder, mention)):
		case slices.Contains(claimable, before.Status):
		case before.Status == claimed && strings.EqualFold(holder, mention):
			return before, nil // already ours: nothing to write
		case before.Status == claimed && holder != "":
			return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrClaimed, Holder: holder,
				Reason: fmt.Sprintf("task %s is %s, held by %s", id, claimed, holder)}
		default:
			return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrClaimed,
				Reason: fmt.Sprintf("task %s is %s; only a %s task can be claimed", id, before.Status, strings.Join(claimable, " or "))}
		}
		u := matrix.Update{Status: matrix.Str(claimed)}
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

// Transition sets task id's status to "to" only if it is still "from" (a
// compare-and-set under the lock, with the README status log line). When
// the status is something else it changes nothing: After holds the row as
// it is and Changed is empty. Dispatch records its outcome with it: IN_PROGRESS
// → REVIEW or BLOCKED, keeping a status the agent set itself during the run.
// from and to are workflow statuses (StatusInProgress, ...), written in the
// matrix's own words (WorkflowStatus).
func Transition(ctx context.Context, ws *workspace.Workspace, id, from, to string, now time.Time) (UpdateResult, error) {
	return modifyTask(ctx, ws, id, now, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		if !isStatus(v, before.Status, from) {
			return before, nil
		}
		word, err := WorkflowStatus(v, to)
		if err != nil {
			return matrix.Task{}, err
		}
		return d.UpdateTask(id, matrix.Update{Status: &word}, now)
	})
}
