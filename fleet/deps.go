package fleet

// deps.go is the fleet's one door to the task service and the agent
// runners. When the task service (package task) and the runner package land,
// only this file changes: claimTask → task.Claim, finishTask/releaseTask →
// the service's status change, taskPrompt → prompt.Assemble, runAgent →
// runner.Exec.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// claimTask sets a TODO task IN_PROGRESS and adds agent (an @mention) to its
// Agents, as one compare-and-set under the matrix lock. A task held by the
// same agent is claimed again; any other status is refused with a
// *matrix.RefusedError naming the holder.
func claimTask(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) (matrix.Task, error) {
	store, err := matrix.OpenStore(ws)
	if err != nil {
		return matrix.Task{}, err
	}
	var claimed matrix.Task
	_, err = store.Modify(ctx, func(d *matrix.Doc) error {
		t, ok := d.Task(id)
		if !ok {
			return d.NotFound(id)
		}
		if err := claimable(t, agent); err != nil {
			return err
		}
		claimed, err = d.UpdateTask(id, matrix.Update{Status: matrix.Str("IN_PROGRESS"), AddAgents: []string{agent}}, now)
		return err
	})
	return claimed, err
}

// claimNext claims the highest-priority ready task (TODO, every dependency
// DONE) in the same compare-and-set.
func claimNext(ctx context.Context, ws *workspace.Workspace, agent string, now time.Time) (matrix.Task, error) {
	store, err := matrix.OpenStore(ws)
	if err != nil {
		return matrix.Task{}, err
	}
	var claimed matrix.Task
	_, err = store.Modify(ctx, func(d *matrix.Doc) error {
		ready := matrix.ReadyTasks(d.Tasks())
		if len(ready) == 0 {
			return &matrix.RefusedError{Reason: "no task is ready: every TODO task waits for a dependency, or there is none"}
		}
		var err error
		claimed, err = d.UpdateTask(ready[0].ID, matrix.Update{Status: matrix.Str("IN_PROGRESS"), AddAgents: []string{agent}}, now)
		return err
	})
	return claimed, err
}

func claimable(t matrix.Task, agent string) error {
	holds := slices.ContainsFunc(t.Agents, func(a string) bool { return strings.EqualFold(a, agent) })
	switch {
	case t.Status == "TODO":
		return nil
	case t.Status == "IN_PROGRESS" && holds:
		return nil
	case t.Status == "IN_PROGRESS":
		return &matrix.RefusedError{Reason: fmt.Sprintf("task %s is IN_PROGRESS, held by %s", t.ID, strings.Join(t.Agents, " ")), Holder: strings.Join(t.Agents, " ")}
	}
	return &matrix.RefusedError{Reason: fmt.Sprintf("task %s is %s; only a TODO task can be claimed", t.ID, t.Status)}
}

// releaseTask gives back a claim whose run never started: the task returns
// to TODO without agent's mention, if it is still IN_PROGRESS.
func releaseTask(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) error {
	store, err := matrix.OpenStore(ws)
	if err != nil {
		return err
	}
	_, err = store.Modify(ctx, func(d *matrix.Doc) error {
		t, ok := d.Task(id)
		if !ok || t.Status != "IN_PROGRESS" {
			return nil
		}
		rest := slices.DeleteFunc(slices.Clone(t.Agents), func(a string) bool { return strings.EqualFold(a, agent) })
		_, err := d.UpdateTask(id, matrix.Update{Status: matrix.Str("TODO"), Set: map[string]string{"Agents": strings.Join(rest, " ")}}, now)
		return err
	})
	return err
}

// finishTask moves a task that is still IN_PROGRESS to REVIEW (ok) or
// BLOCKED, as dispatch does; a status the agent or a person set during the
// run is kept. It returns the status the task ends in.
func finishTask(ctx context.Context, ws *workspace.Workspace, id string, ok bool, now time.Time) (string, error) {
	store, err := matrix.OpenStore(ws)
	if err != nil {
		return "", err
	}
	status := "BLOCKED"
	if ok {
		status = "REVIEW"
	}
	_, err = store.Modify(ctx, func(d *matrix.Doc) error {
		t, found := d.Task(id)
		if !found {
			return d.NotFound(id)
		}
		if t.Status != "IN_PROGRESS" {
			status = t.Status
			return nil
		}
		_, err := d.UpdateTask(id, matrix.Update{Status: matrix.Str(status)}, now)
		return err
	})
	return status, err
}

// taskPrompt is the standard assembled prompt of a claimed task, in the
// agent's role.
func taskPrompt(ctx context.Context, ws *workspace.Workspace, t matrix.Task, role string) (string, error) {
	p, err := dispatch.AssemblePrompt(ctx, ws, dispatch.PromptInput{Task: t, Mode: role, SkipMissingSkills: true})
	if err != nil {
		return "", err
	}
	return p.Text, nil
}

// pickModel is dispatch's model rule: gemini gets the tier of the role and
// difficulty; claude and codex take only an explicit model name from the
// role, else their own default.
func pickModel(ctx context.Context, ws *workspace.Workspace, cli, role, difficulty string) (string, error) {
	choice, err := dispatch.ChooseModel(ctx, ws, role, difficulty, os.Getenv)
	if err != nil {
		return "", err
	}
	if cli == dispatch.CLIGemini || choice.Tier == "" {
		return choice.Model, nil
	}
	return "", nil
}

// loadRole returns a role's mode (its body is the system prompt).
func loadRole(ctx context.Context, ws *workspace.Workspace, name string) (skills.Mode, error) {
	return skills.LoadMode(ctx, ws, name)
}

// listRoles returns the loadable modes.
func listRoles(ctx context.Context, ws *workspace.Workspace) ([]skills.Mode, error) {
	modes, _, err := skills.ListModes(ctx, ws)
	return modes, err
}

// runRequest is one agent CLI run as the supervisor asks for it.
type runRequest struct {
	CLI, Binary, Dir, Prompt, Model, Session, ApprovalMode string
	Env                                                    []string
	Timeout, KillGrace                                     time.Duration
}

// runResult is what the fleet keeps of a run's outcome.
type runResult struct {
	OK        bool
	Canceled  bool
	TimedOut  bool
	SessionID string
	ExitCode  int
	Error     string
	Response  string
	Raw       any // the runner's whole result, written to runs/{id}.result.json
}

// runAgent runs the agent CLI headless in its own process group (the
// dispatch runners) and waits for it; ctx cancellation kills the group.
func runAgent(ctx context.Context, r runRequest, onSession func(string)) (runResult, error) {
	runner, err := dispatch.RunnerFor(r.CLI)
	if err != nil {
		return runResult{}, badInput("cli", "%v", err)
	}
	req := dispatch.Request{
		Prompt: r.Prompt, Model: r.Model, Session: r.Session, ApprovalMode: r.ApprovalMode, Dir: r.Dir,
		Env: r.Env, Binary: r.Binary, Timeout: r.Timeout, KillGrace: r.KillGrace,
	}
	res, err := dispatch.Exec(ctx, runner, req, func(e dispatch.Event) {
		if e.SessionID != "" && onSession != nil {
			onSession(e.SessionID)
		}
	})
	out := runResult{OK: err == nil, Canceled: res.Canceled, TimedOut: res.TimedOut, SessionID: res.SessionID,
		ExitCode: res.ExitCode, Error: res.Error, Response: res.Response, Raw: res}
	if err != nil && !errors.Is(err, dispatch.ErrAgentFailed) && !errors.Is(err, dispatch.ErrCanceled) && !errors.Is(err, dispatch.ErrTimedOut) {
		return out, err
	}
	return out, nil
}
