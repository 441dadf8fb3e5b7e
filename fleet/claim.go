package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/skills"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// intendFunc is told the task a start is about to claim, and whether its
// agent held it already, before the claim is made (Start records it, so
// that the claim of a start killed half way can be given back). nil: no one
// is told.
type intendFunc = func(id string, heldBefore bool) error

// claimNext claims the highest-priority ready task (TODO, every dependency
// DONE). Each claim is a compare-and-set: a task another claimer took first
// is passed over for the next ready one.
func claimNext(ctx context.Context, ws *workspace.Workspace, agent string, now time.Time, intend intendFunc) (matrix.Task, error) {
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return matrix.Task{}, err
	}
	d, err := store.Load(ctx)
	if err != nil {
		return matrix.Task{}, err
	}
	for _, t := range matrix.ReadyTasks(d.Tasks(), d.Vocabulary()) {
		if intend != nil {
			if err := intend(t.ID, false); err != nil { // a ready task is TODO: nobody holds it
				return matrix.Task{}, err
			}
		}
		res, err := tasksvc.Claim(ctx, ws, t.ID, agent, now)
		if errors.Is(err, tasksvc.ErrClaimed) {
			continue
		}
		return res.After, err
	}
	return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Field: "task_id", Reason: "no task is ready: every TODO task waits for a dependency, or there is none; add one (agentinfra task create) or finish what they wait for"}
}

// ClaimTask claims the matrix task of a start for agent in.Name (@name in
// Agents, IN_PROGRESS) through the task lifecycle, as both backends do: the
// task named by in.TaskID (reopened first when it is BLOCKED), or the
// highest-priority ready one when in.Next. It assembles the task's prompt in
// role (the task's own mode when role is ""; loaded is the role read
// already, when the caller has it), without the role's text; a claim whose
// prompt cannot be built is given back. intend (nil: none) is told the task
// before it is claimed. Refusals are fleet errors on task_id (409 held by
// another, 404 unknown, 400 malformed).
func ClaimTask(ctx context.Context, ws *workspace.Workspace, in StartInput, role string, loaded *skills.Mode, now time.Time, intend intendFunc) (ClaimedTask, error) {
	mention := "@" + in.Name
	var t matrix.Task
	var err error
	if in.Next {
		t, err = claimNext(ctx, ws, mention, now, intend)
	} else {
		id := strings.TrimSpace(in.TaskID)
		if intend != nil {
			err = intend(id, holds(ctx, ws, id, mention))
		}
		if err == nil {
			err = reopenBlocked(ctx, ws, id, in, now)
		}
		if err == nil {
			var res tasksvc.UpdateResult
			res, err = tasksvc.Claim(ctx, ws, id, mention, now)
			t = res.After
		}
	}
	if err != nil {
		return ClaimedTask{}, taskError(err)
	}
	if role == "" && (strings.TrimSpace(t.Mode) == "" || t.Mode == "-") {
		role = DefaultRole // a task without a mode: the default role's skills
	}
	p, err := taskPrompt(ctx, ws, t, role, loaded)
	if err != nil {
		return ClaimedTask{}, errors.Join(err, ReleaseTask(context.WithoutCancel(ctx), ws, t.ID, in.Name, now))
	}
	return ClaimedTask{Task: t, Summary: mdtext.Shorten(t.ID+": "+t.Description, 120), Prompt: p}, nil
}

// reopenBlocked reopens task id when it is BLOCKED, so that the agent a
// person (or a manager agent) starts on it explicitly can claim it: BLOCKED
// → TODO through the task lifecycle, by whoever asked (the request's actor,
// else the run's source), the reason in the task README's status log, and
// a notice in the start's warnings. --next never picks a BLOCKED task (it
// is not ready), so only a start naming the task reopens it. A task that
// is not BLOCKED, or that changed meanwhile, is left to the claim.
func reopenBlocked(ctx context.Context, ws *workspace.Workspace, id string, in StartInput, now time.Time) error {
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return nil // the claim says why
	}
	d, err := store.Load(ctx)
	if err != nil {
		return nil
	}
	t, ok := d.Task(id)
	if !ok || !tasksvc.IsStatus(d.Vocabulary(), t, tasksvc.StatusBlocked) {
		return nil
	}
	by := tasksvc.ActorFrom(ctx)
	if by == "" {
		src := in.Source
		if src == "" {
			src = SourceHuman
		}
		by = tasksvc.Actor(src)
	}
	reason := "reopened to start agent @" + in.Name + " on it"
	if _, err := tasksvc.Reopen(ctx, ws, id, reason, by, now); err != nil {
		if errors.Is(err, tasksvc.ErrNotBlocked) {
			return nil // moved meanwhile: the claim decides
		}
		return err
	}
	Notify(ctx, Notice{Agent: in.Name, Text: fmt.Sprintf("task %s was %s: reopened (TODO) by %s to start agent %s on it", id, t.Status, by, in.Name)})
	return nil
}

// holds says agent (@name) holds task id already: IN_PROGRESS, first in
// its Agents. A matrix that cannot be read says no (the claim will say why).
func holds(ctx context.Context, ws *workspace.Workspace, id, agent string) bool {
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return false
	}
	d, err := store.Load(ctx)
	if err != nil {
		return false
	}
	t, ok := d.Task(id)
	return ok && tasksvc.IsStatus(d.Vocabulary(), t, tasksvc.StatusInProgress) && strings.EqualFold(tasksvc.Holder(t), agent)
}

// taskPrompt is the standard assembled prompt of a claimed task, in the
// agent's role (its skills), without the role's text: that is the system
// prompt.
// role names a mode of ws; loaded, when set, is the role read already (a
// project's own roles live in its repository, not in ws).
func taskPrompt(ctx context.Context, ws *workspace.Workspace, t matrix.Task, role string, loaded *skills.Mode) (string, error) {
	p, err := prompt.Assemble(ctx, ws, prompt.Input{Task: t, Mode: role, LoadedMode: loaded, SkipMissingSkills: true, ModeAsSystem: true})
	if err != nil {
		return "", err
	}
	return p.Text, nil
}

// WithNote adds the note of who gave the task to its prompt.
func WithNote(prompt, note string) string {
	if note = strings.TrimSpace(note); note != "" {
		prompt += "\n\n## Note from who gave you this task\n\n" + note + "\n"
	}
	return prompt
}

// taskError names the fleet's input, task_id, on the task service's
// errors about the task (their kind stays).
func taskError(err error) error {
	if e := agenterr.As(err); e != nil && (e.Field == "id" || e.Field == "") && e.Kind != agenterr.Internal && e.Kind != agenterr.Unavailable {
		return agenterr.WithField(err, "task_id")
	}
	return err
}

// ClaimedTask is a matrix task an agent claimed for a run.
type ClaimedTask struct {
	Task matrix.Task
	// Summary is the run's summary ("ID: description", shortened).
	Summary string
	// Prompt is the standard assembled prompt of the task.
	Prompt string
}

// ReleaseTask gives back agent name's claim of task id when its run never
// started: the task returns to TODO if name still holds it.
func ReleaseTask(ctx context.Context, ws *workspace.Workspace, id, name string, now time.Time) error {
	_, err := tasksvc.Release(ctx, ws, id, "@"+name, tasksvc.AgentActor(name), now)
	return err
}

// Summarize shortens a free-text task to a run summary.
func Summarize(text string) string { return mdtext.Shorten(text, 120) }
