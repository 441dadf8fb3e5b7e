package fleet

// deps.go is the fleet's one door to the task service (package task: every
// change of a matrix task), prompt assembly and model choice (package prompt)
// and the agent runners (package runner).

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/skills"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// claimTask sets a TODO task IN_PROGRESS with agent (an @mention) as its
// holder: the task service's compare-and-set under the matrix lock. A task
// the same agent holds is claimed again; any other status is a Conflict
// *agenterr.Error naming the holder.
func claimTask(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) (matrix.Task, error) {
	res, err := tasksvc.Claim(ctx, ws, id, agent, now)
	return res.After, err
}

// claimNext claims the highest-priority ready task (TODO, every dependency
// DONE). Each claim is a compare-and-set: a task another claimer took first
// is passed over for the next ready one.
func claimNext(ctx context.Context, ws *workspace.Workspace, agent string, now time.Time) (matrix.Task, error) {
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return matrix.Task{}, err
	}
	d, err := store.Load(ctx)
	if err != nil {
		return matrix.Task{}, err
	}
	for _, t := range matrix.ReadyTasks(d.Tasks(), d.Vocabulary()) {
		claimed, err := claimTask(ctx, ws, t.ID, agent, now)
		if errors.Is(err, tasksvc.ErrClaimed) {
			continue
		}
		return claimed, err
	}
	return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Reason: "no task is ready: every TODO task waits for a dependency, or there is none"}
}

// errNotClaimed makes a release or finish a no-op when the task is no longer
// IN_PROGRESS (the agent or a person moved it).
var errNotClaimed = errors.New("the task is no longer IN_PROGRESS")

// releaseTask gives back a claim whose run never started: the task returns
// to TODO without agent's mention, if it is still IN_PROGRESS.
func releaseTask(ctx context.Context, ws *workspace.Workspace, id, agent string, now time.Time) error {
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return err
	}
	d, err := store.Load(ctx)
	if err != nil {
		return err
	}
	t, ok := d.Task(id)
	if !ok {
		return nil
	}
	rest := make([]string, 0, len(t.Agents))
	for _, a := range t.Agents {
		if !strings.EqualFold(a, agent) {
			rest = append(rest, a)
		}
	}
	todo, err := tasksvc.WorkflowStatus(d.Vocabulary(), tasksvc.StatusTodo)
	if err != nil {
		return err
	}
	u := matrix.Update{Status: matrix.Str(todo), Set: map[string]string{"Agents": strings.Join(rest, " ")}}
	_, err = tasksvc.UpdateTask(ctx, ws, id, u, now, tasksvc.UpdateOptions{Force: true,
		Precondition: func(before matrix.Task) error {
			if !tasksvc.IsStatus(d.Vocabulary(), before, tasksvc.StatusInProgress) {
				return errNotClaimed
			}
			return nil
		}})
	if errors.Is(err, errNotClaimed) || errors.Is(err, matrix.ErrNotFound) {
		return nil
	}
	return err
}

// finishTask moves a task that is still IN_PROGRESS to REVIEW (ok) or
// BLOCKED, as dispatch does, with the README status log; a status the agent
// or a person set during the run is kept. It returns the status the task
// ends in.
func finishTask(ctx context.Context, ws *workspace.Workspace, id string, ok bool, now time.Time) (string, error) {
	status := tasksvc.StatusBlocked
	if ok {
		status = tasksvc.StatusReview
	}
	res, err := tasksvc.Transition(ctx, ws, id, tasksvc.StatusInProgress, status, now)
	if err != nil {
		return "", err
	}
	return res.After.Status, nil
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

// pickModel is dispatch's model rule: gemini gets the tier of the role and
// difficulty; claude and codex take only an explicit model name from the
// role, else their own default.
func pickModel(ctx context.Context, ws *workspace.Workspace, cli, role, difficulty string) (string, error) {
	choice, err := prompt.ChooseModel(ctx, ws, role, difficulty, ws.Getenv)
	if err != nil {
		return "", err
	}
	if cli == runner.CLIGemini || choice.Tier == "" {
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
	CLI, Binary, Dir, Prompt, SystemPrompt, Model, Session, ApprovalMode string
	Env                                                                  []string
	Timeout, KillGrace                                                   time.Duration
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
	rn, err := runner.For(r.CLI)
	if err != nil {
		return runResult{}, badInput("cli", "%v", err)
	}
	req := runner.Request{
		Prompt: r.Prompt, SystemPrompt: r.SystemPrompt, Model: r.Model, Session: r.Session, ApprovalMode: r.ApprovalMode, Dir: r.Dir,
		Env: r.Env, Binary: r.Binary, Timeout: r.Timeout, KillGrace: r.KillGrace,
	}
	res, err := runner.Exec(ctx, rn, req, func(e runner.Event) {
		if e.SessionID != "" && onSession != nil {
			onSession(e.SessionID)
		}
	})
	out := runResult{OK: err == nil, Canceled: res.Canceled, TimedOut: res.TimedOut, SessionID: res.SessionID,
		ExitCode: res.ExitCode, Error: res.Error, Response: res.Response, Raw: res}
	if err != nil && !errors.Is(err, runner.ErrAgentFailed) && !errors.Is(err, runner.ErrCanceled) && !errors.Is(err, runner.ErrTimedOut) {
		return out, err
	}
	return out, nil
}
