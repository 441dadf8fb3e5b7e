package task

import (
	"context"
	"fmt"
	"slices"
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
// it names none), Reason says the status. On a matrix without an Agents
// column the holder is the one its README's status log names (holder.go).
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
	// Without an Agents column the holder is recorded in the README
	// (holder.go): a task with no folder gets one first.
	claimable := func(d *matrix.Doc, t matrix.Task) bool {
		_, _, err := claimRow(ws, d, id, mention, t, now, o)
		return err == nil
	}
	if err := ensureHolderFolder(ctx, ws, id, now, claimable); err != nil {
		return UpdateResult{}, err
	}
	var holderAfter string
	res, err := modifyTaskNoting(ctx, ws, id, now, func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error) {
		after, note, err := claimRow(ws, d, id, mention, before, now, o)
		holderAfter = Holder(ws, d, after)
		if note != "" {
			holderAfter = mention
		}
		return after, note, err
	})
	res.Holder = holderAfter
	return res, err
}

// claimRow is the claim's compare-and-set on the row, under the lock. With
// no Agents column it changes the status only and returns the README note
// that records the holder.
func claimRow(ws *workspace.Workspace, d *matrix.Doc, id, mention string, before matrix.Task, now time.Time, o ClaimOptions) (matrix.Task, string, error) {
	v := d.Vocabulary()
	claimed, err := WorkflowStatus(v, StatusInProgress)
	if err != nil {
		return matrix.Task{}, "", err
	}
	todo, err := WorkflowStatus(v, StatusTodo)
	if err != nil {
		return matrix.Task{}, "", err
	}
	claimable := []string{todo}
	for _, s := range o.Also {
		if w, err := WorkflowStatus(v, s); err == nil {
			claimable = append(claimable, w)
		}
	}
	holder := Holder(ws, d, before)
	switch {
	case o.Force && !(before.Status == claimed && strings.EqualFold(holder, mention)):
	case slices.Contains(claimable, before.Status):
	case before.Status == claimed && strings.EqualFold(holder, mention):
		return before, "", nil // already ours: nothing to write
	case before.Status == claimed && holder != "":
		return matrix.Task{}, "", &matrix.RefusedError{Err: ErrClaimed, Holder: holder,
			Reason: fmt.Sprintf("task %s is %s, held by %s", id, claimed, holder)}
	default:
		return matrix.Task{}, "", &matrix.RefusedError{Err: ErrClaimed,
			Reason: fmt.Sprintf("task %s is %s; only a %s task can be claimed", id, before.Status, strings.Join(claimable, " or "))}
	}
	if !d.RowHasColumn(id, matrix.ColAgents) {
		after, err := d.UpdateTask(id, matrix.Update{Status: matrix.Str(claimed)}, now)
		return after, claimedByMarker + mention, err
	}
	u := matrix.Update{Status: matrix.Str(claimed)}
	if i := indexFold(before.Agents, mention); i < 0 {
		u.AddAgents = []string{mention}
	} else if i < len(before.Agents)-1 {
		// Already named: move it last, where the holder is read from.
		agents := append(append([]string{}, before.Agents[:i]...), before.Agents[i+1:]...)
		u.Set = map[string]string{matrix.ColAgents: strings.Join(append(agents, before.Agents[i]), " ")}
	}
	after, err := d.UpdateTask(id, u, now)
	return after, "", err
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
