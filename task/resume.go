package task

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrNotResumable is a resume of a run whose task moved on since the run
// was interrupted (a person or another run changed it).
var ErrNotResumable = agenterr.New(agenterr.Conflict, "the task cannot be resumed")

// Resume is the reopen of the lifecycle for a run that is resumed (a
// supervised run whose supervisor died, taken up again): task id goes from
// BLOCKED back to IN_PROGRESS, held by agent, with the reason ("resumed by
// @ana") in its status log. A task agent still holds IN_PROGRESS changes
// nothing; any other status or holder is refused (ErrNotResumable): the task
// moved on, and the run is not resumed over it.
func Resume(ctx context.Context, ws *workspace.Workspace, id, agent, reason string, by Actor, now time.Time) (UpdateResult, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return UpdateResult{}, err
	}
	resumable := func(d *matrix.Doc, t matrix.Task) error {
		v := d.Vocabulary()
		switch {
		case isStatus(v, t.Status, StatusBlocked):
			return nil
		case isStatus(v, t.Status, StatusInProgress) && strings.EqualFold(holderIn(ws, d, t), mention):
			return nil
		}
		return &agenterr.Error{Kind: agenterr.Conflict, Err: ErrNotResumable, Field: "id", Holder: holderIn(ws, d, t),
			Reason: fmt.Sprintf("task %s is %s now (held by %s): it moved on since the run was interrupted", id, t.Status, orNobody(holderIn(ws, d, t)))}
	}
	if err := ensureHolderFolder(ctx, ws, id, now, func(d *matrix.Doc, t matrix.Task) bool { return resumable(d, t) == nil }); err != nil {
		return UpdateResult{}, err
	}
	return modifyTaskNoting(ctx, ws, id, stamp{now: now, by: by.or(ctx), reason: reason}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error) {
		if err := resumable(d, before); err != nil {
			return before, "", err
		}
		u, err := claimUpdate(d.Vocabulary(), before, holderIn(ws, d, before), mention, ClaimOptions{Force: true})
		if err != nil || u == nil {
			return before, "", err // already ours
		}
		ru, mentions := RowUpdate(d, id, *u)
		after, err := d.UpdateTask(id, ru, now)
		note := ""
		if len(mentions) > 0 {
			note = claimedByMarker + mention
		}
		return after, note, err
	})
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}
