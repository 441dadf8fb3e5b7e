package task

// The lifecycle of a task as agentinfra's runs move it. Each move is a
// compare-and-set under the matrix lock (a move from a status the task no
// longer has changes nothing), takes the actor who makes it, and writes
// the task README's status log line with the actor and the reason:
//
//	TODO ──claim──▶ IN_PROGRESS ──finish (ok)─────▶ REVIEW
//	  ▲                 │    └────finish (failed)──▶ BLOCKED ──reopen──▶ TODO
//	  └─────release─────┘
//	any status but DONE ──block──▶ BLOCKED
//
// Nothing else in agentinfra moves a task along it: dispatch and the fleet
// (both backends) call these. `task update --status` stays a person's
// direct edit of the row.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrNotBlocked is a reopen of a task that is not BLOCKED.
var ErrNotBlocked = agenterr.New(agenterr.Conflict, "task is not blocked")

// stamp is when a change is made, by whom and why: the status log line
// and the change's event say it.
type stamp struct {
	now    time.Time
	by     Actor
	reason string
	// review are lines for the README's Review section, written with the
	// change (review.go).
	review []string
}

// statusLine is the README status log line of a status change.
func (s stamp) statusLine(from, to string) string {
	line := fmt.Sprintf("- %s: status %s → %s", s.now.Format("2006-01-02 15:04"), from, to)
	if s.by != "" {
		line += " by " + s.by.Handle()
	}
	if r := oneLine(s.reason); r != "" {
		line += ": " + r
	}
	return line
}

// noteLine is the status log line of a change that also records a note
// (holder.go: a claim on a matrix without an Agents column), or of a note
// alone when the status stays.
func (s stamp) noteLine(from, to, note string) string {
	switch {
	case note == "":
		return s.statusLine(from, to)
	case from == to:
		line := fmt.Sprintf("- %s: %s", s.now.Format("2006-01-02 15:04"), note)
		if s.by != "" {
			line += " (by " + s.by.Handle() + ")"
		}
		return line
	}
	w := s
	if r := oneLine(s.reason); r != "" {
		w.reason = r + "; " + note
	} else {
		w.reason = note
	}
	return w.statusLine(from, to)
}

// oneLine makes a reason fit one log line.
func oneLine(s string) string {
	return mdtext.Shorten(strings.Join(strings.Fields(s), " "), 240)
}

// Claim makes agent the holder of task id: the status becomes IN_PROGRESS
// and agent the last @mention of Agents, with the README status log line
// naming agent. It is a compare-and-set under the matrix lock, so of many
// agents claiming one task at once exactly one wins. It succeeds for a TODO
// task, and for an IN_PROGRESS task already held by agent (changing
// nothing). Otherwise it is refused with a Conflict *agenterr.Error matching
// ErrClaimed: Holder names the agent holding an IN_PROGRESS task (the last
// @mention of its Agents; "" when it names none), Reason says the status.
func Claim(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) (UpdateResult, error) {
	return ClaimWith(ctx, ws, id, agent, now, ClaimOptions{})
}

// ClaimOptions widen a claim.
type ClaimOptions struct {
	// Again claims a task that is not TODO too, unless it is DONE or
	// IN_PROGRESS (dispatch runs BLOCKED and REVIEW tasks again); an
	// IN_PROGRESS task is then refused even when agent holds it, so that
	// two runs never share a task. Its refusals name the override "force".
	Again bool
	// Force claims the task whatever its status and holder (dispatch --force).
	Force bool
	// By is who claims the task for agent ("" = agent itself).
	By Actor
}

// ClaimWith is Claim with options. Without them it is Claim.
func ClaimWith(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time, o ClaimOptions) (UpdateResult, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return UpdateResult{}, err
	}
	by := o.By
	if by == "" {
		by = Actor(mention)
	}
	// Without an Agents column the holder is recorded in the README
	// (holder.go): a task with no folder gets one first, if the claim is to
	// be made.
	claimable := func(d *matrix.Doc, t matrix.Task) bool {
		_, err := claimUpdate(d.Vocabulary(), t, holderIn(ws, d, t), mention, o)
		return err == nil
	}
	if err := ensureHolderFolder(ctx, ws, id, now, claimable); err != nil {
		return UpdateResult{}, err
	}
	var holder string
	res, err := modifyTaskNoting(ctx, ws, id, stamp{now: now, by: by}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, string, error) {
		u, err := claimUpdate(d.Vocabulary(), before, holderIn(ws, d, before), mention, o)
		if err != nil || u == nil {
			holder = holderIn(ws, d, before)
			return before, "", err // refused, or already ours: nothing to write
		}
		ru, mentions := RowUpdate(d, id, *u)
		after, err := d.UpdateTask(id, ru, now)
		holder = holderOf(after)
		note := ""
		if len(mentions) > 0 {
			note, holder = claimedByMarker+mention, mention
		}
		return after, note, err
	})
	res.Holder = holder
	return res, err
}

// CanClaim says whether agent may claim t with o, as a claim checks it
// under the lock: nil, or the claim's refusal. For a plan made before the
// claim (dispatch --dry-run).
func CanClaim(v *matrix.Vocabulary, t matrix.Task, agent string, o ClaimOptions) error {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return err
	}
	_, err = claimUpdate(v, t, holderOf(t), mention, o)
	return err
}

// PreviewClaim returns task id as a claim by agent would leave it, computed
// on d without writing anything (the prompt of a plan shows the row as the
// claim leaves it).
func PreviewClaim(d *matrix.Doc, id, agent string, o ClaimOptions, now time.Time) (matrix.Task, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return matrix.Task{}, err
	}
	before, ok := d.Task(id)
	if !ok {
		return matrix.Task{}, d.NotFound(id)
	}
	u, err := claimUpdate(d.Vocabulary(), before, holderOf(before), mention, o)
	if err != nil || u == nil {
		return before, err
	}
	// (On a matrix without an Agents column the claim records the holder in
	// the task README: the row takes the status only.)
	ru, _ := RowUpdate(d, id, *u)
	return d.UpdateTask(id, ru, now)
}

// claimUpdate is the change a claim makes to before, held by holder (see
// holderIn): nil when agent holds it already, an error when the claim is
// refused.
func claimUpdate(v *matrix.Vocabulary, before matrix.Task, holder, mention string, o ClaimOptions) (*matrix.Update, error) {
	id := before.ID
	claimed, err := WorkflowStatus(v, StatusInProgress)
	if err != nil {
		return nil, err
	}
	todo, err := WorkflowStatus(v, StatusTodo)
	if err != nil {
		return nil, err
	}
	done, _ := WorkflowStatus(v, StatusDone)
	ours := before.Status == claimed && strings.EqualFold(holder, mention)
	switch {
	case o.Force && !ours:
	case o.Again:
		if err := refuseAgain(before, claimed, done); err != nil {
			return nil, err
		}
	case before.Status == todo:
	case ours:
		return nil, nil
	case before.Status == claimed && holder != "":
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrClaimed, Holder: holder,
			Reason: fmt.Sprintf("task %s is %s, held by %s", id, claimed, holder)}
	default:
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrClaimed,
			Reason: fmt.Sprintf("task %s is %s; only a %s task can be claimed", id, before.Status, todo)}
	}
	u := matrix.Update{Status: matrix.Str(claimed)}
	if i := indexFold(before.Agents, mention); i < 0 {
		u.AddAgents = []string{mention}
	} else if i < len(before.Agents)-1 {
		// Already named: move it last, where the holder is read from.
		agents := append(append([]string{}, before.Agents[:i]...), before.Agents[i+1:]...)
		u.Set = map[string]string{matrix.ColAgents: strings.Join(append(agents, before.Agents[i]), " ")}
	}
	return &u, nil
}

// refuseAgain is the refusal of a claim with Again: a DONE task, and an
// IN_PROGRESS one whoever holds it.
func refuseAgain(t matrix.Task, claimed, done string) error {
	switch t.Status {
	case done:
		return &agenterr.Error{Kind: agenterr.Refused, Err: ErrClaimed, Field: "id", Override: "force", Reason: fmt.Sprintf("task %s is %s", t.ID, t.Status)}
	case claimed:
		who := strings.Join(t.Agents, " ")
		if who == "" {
			who = "someone"
		}
		return &agenterr.Error{Kind: agenterr.Refused, Err: ErrClaimed, Field: "id", Override: "force", Holder: holderOf(t),
			Reason: fmt.Sprintf("task %s is already %s (%s)", t.ID, t.Status, who)}
	}
	return nil
}

// holderOf is the agent holding t: the last @mention of its Agents.
func holderOf(t matrix.Task) string {
	if n := len(t.Agents); n > 0 {
		return t.Agents[n-1]
	}
	return ""
}

// Holder returns the agent holding t (the last @mention of Agents; "" when
// none).
func Holder(t matrix.Task) string { return holderOf(t) }

func indexFold(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

// Release gives back agent's claim of task id when its run never started:
// an IN_PROGRESS task that agent holds goes back to TODO without agent's
// @mention. A task that is no longer IN_PROGRESS, or that another agent
// holds now, is left as it is (Changed is empty); a task gone from the
// matrix is not an error either.
func Release(ctx context.Context, ws *workspace.Workspace, id, agent string, by Actor, now time.Time) (UpdateResult, error) {
	mention, err := matrix.NormalizeMention(agent)
	if err != nil {
		return UpdateResult{}, err
	}
	res, err := modifyTask(ctx, ws, id, stamp{now: now, by: by.or(ctx), reason: "released: the run did not start"}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		if !isStatus(v, before.Status, StatusInProgress) || !strings.EqualFold(holderIn(ws, d, before), mention) {
			return before, nil
		}
		todo, err := WorkflowStatus(v, StatusTodo)
		if err != nil {
			return matrix.Task{}, err
		}
		rest := slices.DeleteFunc(slices.Clone(before.Agents), func(a string) bool { return strings.EqualFold(a, mention) })
		ru, _ := RowUpdate(d, id, matrix.Update{Status: &todo, Set: map[string]string{matrix.ColAgents: strings.Join(rest, " ")}})
		return d.UpdateTask(id, ru, now)
	})
	if errors.Is(err, matrix.ErrNotFound) {
		return UpdateResult{}, nil
	}
	return res, err
}

// FinishOptions say how a run on a task ended.
type FinishOptions struct {
	// OK sends the task to REVIEW; otherwise it goes to BLOCKED.
	OK bool
	// Reason says why (the run's outcome), in the status log line.
	Reason string
	// Holder is the agent whose run ended ("@papi"): a task another agent
	// holds now is left as it is. "" finishes whoever holds it.
	Holder string
}

// FinishResult is what Finish did.
type FinishResult struct {
	UpdateResult
	// There is true when the task was at the status the run's end sends it
	// to already (a run whose end is moved on a second time, by the reap of
	// a supervisor that died after moving it): nothing changed, as asked.
	There bool
}

// Finish moves task id from IN_PROGRESS to REVIEW (o.OK) or BLOCKED, with
// the status log line naming by and the reason. A task whose status was
// changed meanwhile (the agent or a person moved it, as the reporting
// protocol asks), or that another agent holds now, is left as it is:
// Changed is empty and After is the row as it is.
func Finish(ctx context.Context, ws *workspace.Workspace, id string, o FinishOptions, by Actor, now time.Time) (FinishResult, error) {
	to := StatusBlocked
	if o.OK {
		to = StatusReview
	}
	var there bool
	res, err := modifyTask(ctx, ws, id, stamp{now: now, by: by.or(ctx), reason: o.Reason}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		if !isStatus(v, before.Status, StatusInProgress) {
			there = isStatus(v, before.Status, to) && (o.Holder == "" || strings.EqualFold(holderIn(ws, d, before), o.Holder))
			return before, nil
		}
		if o.Holder != "" && !strings.EqualFold(holderIn(ws, d, before), o.Holder) {
			return before, nil
		}
		word, err := WorkflowStatus(v, to)
		if err != nil {
			return matrix.Task{}, err
		}
		return d.UpdateTask(id, matrix.Update{Status: &word}, now)
	})
	return FinishResult{UpdateResult: res, There: there}, err
}

// Block moves task id to BLOCKED with the reason, from any status but DONE
// (refused: a DONE task is reopened by a person, not blocked). A task
// already BLOCKED is left as it is.
func Block(ctx context.Context, ws *workspace.Workspace, id, reason string, by Actor, now time.Time) (UpdateResult, error) {
	return modifyTask(ctx, ws, id, stamp{now: now, by: by.or(ctx), reason: reason}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		blocked, err := WorkflowStatus(v, StatusBlocked)
		if err != nil {
			return matrix.Task{}, err
		}
		switch {
		case before.Status == blocked:
			return before, nil
		case isStatus(v, before.Status, StatusDone):
			return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Reason: fmt.Sprintf("task %s is %s: only an open task can be blocked", id, before.Status)}
		}
		return d.UpdateTask(id, matrix.Update{Status: &blocked}, now)
	})
}

// Reopen moves a BLOCKED task back to TODO, with the reason, so that it can
// be claimed again. Any other status is refused (ErrNotBlocked).
func Reopen(ctx context.Context, ws *workspace.Workspace, id, reason string, by Actor, now time.Time) (UpdateResult, error) {
	return modifyTask(ctx, ws, id, stamp{now: now, by: by.or(ctx), reason: reason}, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		v := d.Vocabulary()
		if !isStatus(v, before.Status, StatusBlocked) {
			return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrNotBlocked, Field: "id",
				Reason: fmt.Sprintf("task %s is %s; only a BLOCKED task can be reopened", id, before.Status)}
		}
		todo, err := WorkflowStatus(v, StatusTodo)
		if err != nil {
			return matrix.Task{}, err
		}
		return d.UpdateTask(id, matrix.Update{Status: &todo}, now)
	})
}
