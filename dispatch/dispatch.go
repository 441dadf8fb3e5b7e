// Package dispatch turns a matrix task into an agent run: it assembles the
// prompt (AssemblePrompt), picks the model (SelectModel), runs an agent CLI
// headless (Runner, Exec: gemini, claude, codex) and records the outcome in the
// matrix and the task folder (Run). It also builds task context (TaskContext)
// and session handoffs (Handoff).
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrRefused is returned when a task may not be dispatched (DONE, already
// IN_PROGRESS, archived) without Force.
var ErrRefused = errors.New("dispatch refused")

// DefaultTimeout bounds a dispatch when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Minute

// Outcome values.
const (
	OutcomeDryRun   = "dry_run"
	OutcomeSuccess  = "success"
	OutcomeFailed   = "failed"
	OutcomeCanceled = "canceled"
	OutcomeTimedOut = "timed_out"
)

// Options are the inputs of one dispatch (the CLI flags and the MCP tool's
// arguments).
type Options struct {
	ID           string
	Mode         string // "" = the task's mode
	Model        string // "" = SelectModel's choice (gemini) or the CLI's default
	CLI          string // gemini (default) | claude | codex
	TaskOverride string
	ContextFiles []string
	Session      string // continue this session of the CLI
	ApprovalMode string // default | auto_edit | yolo
	Timeout      time.Duration
	DryRun       bool
	Force        bool

	// Now is the clock (nil = time.Now); Getenv reads the environment for model
	// and skill lookup (nil = os.Getenv).
	Now    func() time.Time
	Getenv func(string) string
	// Binary, Env, CleanEnv, ExtraArgs and KillGrace go to the runner's Request
	// unchanged (tests point Binary at a stub; Env adds KEY=VALUE entries).
	Binary    string
	Env       []string
	CleanEnv  bool
	ExtraArgs []string
	KillGrace time.Duration
}

// Outcome reports what a dispatch did (or, for a dry run, would do).
type Outcome struct {
	ID           string       `json:"id"`
	DryRun       bool         `json:"dry_run"`
	Outcome      string       `json:"outcome"` // dry_run | success | failed | canceled | timed_out
	CLI          string       `json:"cli"`
	Binary       string       `json:"binary"` // the executable that runs ("" if not found)
	Mode         string       `json:"mode"`
	Model        string       `json:"model"`
	ModelReason  string       `json:"model_reason"`
	ApprovalMode string       `json:"approval_mode"`
	Session      string       `json:"session"` // the session resumed ("" = new)
	Timeout      string       `json:"timeout"`
	Argv         []string     `json:"argv"` // secrets redacted, prompt as a placeholder
	Env          []string     `json:"env"`  // environment additions, secrets redacted
	Stdin        bool         `json:"prompt_on_stdin"`
	PromptBytes  int          `json:"prompt_bytes"`
	PromptParts  []PromptPart `json:"prompt_parts"`
	StatusBefore string       `json:"status_before"`
	StatusAfter  string       `json:"status_after"`
	TrackingFile string       `json:"tracking_file"` // workspace-relative, "" for a dry run
	ResultFile   string       `json:"result_file"`
	Warnings     []string     `json:"warnings"`
	Result       *Result      `json:"result"` // nil for a dry run
	// Prompt is the exact prompt (not in JSON: it is in the tracking file).
	Prompt string `json:"-"`
}

// Run dispatches one task: it assembles the prompt, picks the model, moves the
// row to IN_PROGRESS (adding the mode's @mention), records the exact prompt and
// command in .agent/tasks/{id}_*/tracking/{timestamp}_dispatch.md, runs the
// agent CLI headless (see Exec: ctx cancellation and opts.Timeout kill its
// process group), appends the parsed result to that file, writes
// {timestamp}_result.json, and moves the row to REVIEW on success or BLOCKED on
// failure. onEvent receives lifecycle ("dispatch") events and the CLI's live
// events; it is called from one goroutine at a time and never after Run
// returns.
//
// A DONE or IN_PROGRESS task is refused (ErrRefused) unless opts.Force. With
// opts.DryRun nothing is written or run. When the agent run fails, Run returns
// the Outcome (with Result) and an error wrapping ErrAgentFailed, ErrCanceled
// or ErrTimedOut; the matrix and the tracking file are still updated.
func Run(ctx context.Context, ws *workspace.Workspace, opts Options, onEvent func(Event)) (Outcome, error) {
	emit := func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	id := strings.TrimSpace(opts.ID)
	out := Outcome{ID: id, DryRun: opts.DryRun, Argv: []string{}, Env: []string{}, PromptParts: []PromptPart{}, Warnings: []string{}}
	if id == "" {
		return out, errors.New("no task ID given: pass the ID of a matrix row (see `agentinfra task list`)")
	}
	runner, err := RunnerFor(opts.CLI)
	if err != nil {
		return out, err
	}
	out.CLI = runner.Name()
	if err := checkApproval(opts.ApprovalMode); err != nil {
		return out, err
	}
	out.ApprovalMode = opts.ApprovalMode
	if out.ApprovalMode == "" {
		out.ApprovalMode = ApprovalDefault
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out.Timeout = timeout.String()
	out.Session = opts.Session

	task, err := LoadTask(ctx, ws, id)
	if err != nil {
		return out, err
	}
	out.StatusBefore, out.StatusAfter = task.Status, task.Status
	if err := refuse(task, opts.Force); err != nil {
		return out, err
	}
	taskDir, archived := ws.FindTaskDir(id)
	if archived {
		return out, fmt.Errorf("%w: task %s is archived (%s); restore its folder to .agent/tasks/ first", ErrRefused, id, tasksvc.RelPath(ws, taskDir))
	}

	mode := strings.TrimSpace(opts.Mode)
	if mode == "" {
		mode = task.Mode
	}
	out.Mode = mode
	out.Model, out.ModelReason, err = pickModel(ctx, ws, runner.Name(), mode, task.Difficulty, opts.Model, getenv)
	if err != nil {
		return out, err
	}
	prompt, err := AssemblePrompt(ctx, ws, PromptInput{
		// The task's own mode is left to AssemblePrompt, which goes on
		// without a mode file that does not exist (with a warning).
		Task: task, TaskDir: taskDir, Mode: strings.TrimSpace(opts.Mode), TaskOverride: opts.TaskOverride,
		ContextFiles: opts.ContextFiles, SkipMissingSkills: true, Getenv: getenv,
	})
	if err != nil {
		return out, err
	}
	out.Prompt, out.PromptBytes = prompt.Text, len(prompt.Text)
	if prompt.Parts != nil {
		out.PromptParts = prompt.Parts
	}
	out.Warnings = append(out.Warnings, prompt.Warnings...)
	for _, s := range prompt.MissingSkills {
		out.Warnings = append(out.Warnings, fmt.Sprintf("skill %s could not be loaded; the prompt says so", s))
	}

	req := Request{
		Prompt: prompt.Text, Model: out.Model, Session: opts.Session, ApprovalMode: opts.ApprovalMode,
		Dir: ws.Root, Env: opts.Env, CleanEnv: opts.CleanEnv, Binary: opts.Binary,
		ExtraArgs: opts.ExtraArgs, Timeout: timeout, KillGrace: opts.KillGrace,
	}
	cmd, err := runner.Command(req)
	if err != nil {
		return out, err
	}
	out.Argv = RedactArgv(cmd.Argv, cmd.PromptArg)
	out.Env = RedactEnv(append(append([]string{}, opts.Env...), cmd.Env...))
	out.Stdin = cmd.Stdin != ""
	out.Binary = opts.Binary
	if out.Binary == "" {
		if p, lerr := LookupCLIEnv(cmd.Argv[0], getenv); lerr == nil {
			out.Binary, req.Binary = p, p
		} else if opts.DryRun {
			out.Warnings = append(out.Warnings, lerr.Error())
		} else {
			return out, lerr
		}
	}
	if opts.DryRun {
		out.Outcome = OutcomeDryRun
		return out, nil
	}

	// Before: the row goes IN_PROGRESS under the lock (the check is repeated
	// there, so two dispatchers cannot both take the task).
	mention := "@" + mode
	if mode == "" {
		mention = "@" + runner.Name()
	}
	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return out, err
	}
	started := now()
	_, err = store.Modify(ctx, func(d *matrix.Doc) error {
		t, ok := d.Task(id)
		if !ok {
			return fmt.Errorf("%w: task %s disappeared from the matrix", matrix.ErrNotFound, id)
		}
		if err := refuse(t, opts.Force); err != nil {
			return err
		}
		out.StatusBefore = t.Status
		_, err := d.UpdateTask(id, matrix.Update{Status: matrix.Str("IN_PROGRESS"), AddAgents: []string{mention}}, started)
		return err
	})
	if err != nil {
		return out, err
	}
	out.StatusAfter = "IN_PROGRESS"
	emit(Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s → IN_PROGRESS, %s", id, out.StatusBefore, mention)})

	// From here on the row says IN_PROGRESS: whatever happens, record the
	// outcome and move it on, even when ctx is canceled.
	bookCtx, cancelBook := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancelBook()
	tracking, stamp, err := newTrackingFile(ws, task, taskDir, started)
	if err != nil {
		return out, blockAfter(bookCtx, ws, id, &out, now, err)
	}
	out.TrackingFile = tasksvc.RelPath(ws, tracking)
	if err := os.WriteFile(tracking, []byte(renderDispatch(&out, prompt, stamp)), 0o644); err != nil {
		return out, blockAfter(bookCtx, ws, id, &out, now, fmt.Errorf("write %s: %w", out.TrackingFile, err))
	}

	emit(Event{Kind: "dispatch", Text: fmt.Sprintf("running %s (model %s)", out.CLI, orDefault(out.Model, "CLI default"))})
	res, runErr := Exec(ctx, runner, req, onEvent)
	out.Result = &res
	switch {
	case res.TimedOut:
		out.Outcome = OutcomeTimedOut
	case res.Canceled:
		out.Outcome = OutcomeCanceled
	case runErr != nil:
		out.Outcome = OutcomeFailed
	default:
		out.Outcome = OutcomeSuccess
	}
	status := "REVIEW"
	if runErr != nil {
		status = "BLOCKED"
	}

	// After: the row first (so the files can say where it went), then the files.
	// The agent (or a person) may have moved the row itself during the run, as
	// the prompt's reporting protocol asks: such a status is kept.
	var bookErrs []error
	_, err = store.Modify(bookCtx, func(d *matrix.Doc) error {
		t, ok := d.Task(id)
		if !ok {
			return fmt.Errorf("%w: task %s disappeared from the matrix during the run", matrix.ErrNotFound, id)
		}
		if t.Status != "IN_PROGRESS" {
			out.StatusAfter = t.Status
			out.Warnings = append(out.Warnings, fmt.Sprintf("the status was changed to %s during the run; kept it instead of %s", t.Status, status))
			return nil
		}
		_, err := d.UpdateTask(id, matrix.Update{Status: matrix.Str(status)}, now())
		if err == nil {
			out.StatusAfter = status
		}
		return err
	})
	if err != nil {
		bookErrs = append(bookErrs, fmt.Errorf("move task %s to %s: %w", id, status, err))
		out.Warnings = append(out.Warnings, bookErrs[0].Error())
	}
	resultPath := filepath.Join(filepath.Dir(tracking), stamp+"_result.json")
	out.ResultFile = tasksvc.RelPath(ws, resultPath)
	if err := appendFile(tracking, renderResult(&out)); err != nil {
		bookErrs = append(bookErrs, fmt.Errorf("append the result to %s: %w", out.TrackingFile, err))
	}
	js, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile(resultPath, append(js, '\n'), 0o644); err != nil {
		bookErrs = append(bookErrs, fmt.Errorf("write %s: %w", out.ResultFile, err))
	}
	emit(Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s, now %s", id, out.Outcome, out.StatusAfter)})
	if runErr != nil {
		return out, errors.Join(append([]error{runErr}, bookErrs...)...)
	}
	return out, errors.Join(bookErrs...)
}

// refuse explains why a task may not be dispatched without --force.
func refuse(t matrix.Task, force bool) error {
	if force {
		return nil
	}
	switch t.Status {
	case "DONE":
		return &matrix.RefusedError{Err: ErrRefused, Override: "force", Reason: fmt.Sprintf("task %s is DONE", t.ID)}
	case "IN_PROGRESS":
		who := strings.Join(t.Agents, " ")
		if who == "" {
			who = "someone"
		}
		return &matrix.RefusedError{Err: ErrRefused, Override: "force", Holder: who, Reason: fmt.Sprintf("task %s is already IN_PROGRESS (%s)", t.ID, who)}
	}
	return nil
}

// pickModel returns the model and why. An explicit model wins. gemini gets
// SelectModel's tier rule. The tiers name gemini models, so claude and codex
// only take an explicit model name from the mode or config, else their default.
func pickModel(ctx context.Context, ws *workspace.Workspace, cli, mode, difficulty, explicit string, getenv func(string) string) (string, string, error) {
	if m := strings.TrimSpace(explicit); m != "" {
		return m, "--model " + m + " (explicit)", nil
	}
	choice, err := ChooseModel(ctx, ws, mode, difficulty, getenv)
	if err != nil {
		return "", "", err
	}
	if cli == CLIGemini || choice.Tier == "" {
		return choice.Model, choice.Reason, nil
	}
	return "", fmt.Sprintf("%s's default model (the %s tier names a gemini model; pass --model to choose)", cli, choice.Tier), nil
}

// newTrackingFile creates tracking/{stamp}_dispatch.md (a new name even when
// two dispatches start in the same second), creating the task folder when the
// task has none.
func newTrackingFile(ws *workspace.Workspace, t matrix.Task, taskDir string, at time.Time) (path, stamp string, err error) {
	if taskDir == "" {
		slug := tasksvc.Slugify(t.Description)
		if slug == "" {
			slug = "task"
		}
		taskDir = filepath.Join(ws.TasksDir(), t.ID+"_"+slug)
		for _, sub := range []string{"tracking", "artifacts"} {
			if err := os.MkdirAll(filepath.Join(taskDir, sub), 0o755); err != nil {
				return "", "", fmt.Errorf("create the task folder: %w", err)
			}
		}
	}
	dir := filepath.Join(taskDir, "tracking")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", tasksvc.RelPath(ws, dir), err)
	}
	base := at.UTC().Format("20060102T150405Z")
	for i := 1; i < 1000; i++ {
		stamp = base
		if i > 1 {
			stamp = fmt.Sprintf("%s-%d", base, i)
		}
		path = filepath.Join(dir, stamp+"_dispatch.md")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("create %s: %w", tasksvc.RelPath(ws, path), err)
		}
		return path, stamp, f.Close()
	}
	return "", "", fmt.Errorf("too many dispatches of %s at %s", t.ID, base)
}

// blockAfter moves a task that was set IN_PROGRESS to BLOCKED when the
// dispatch could not even start, and returns cause (joined with any failure).
func blockAfter(ctx context.Context, ws *workspace.Workspace, id string, out *Outcome, now func() time.Time, cause error) error {
	out.Outcome = OutcomeFailed
	if _, err := tasksvc.SetStatus(ctx, ws, id, "BLOCKED", now()); err != nil {
		return errors.Join(cause, fmt.Errorf("move task %s to BLOCKED: %w", id, err))
	}
	out.StatusAfter = "BLOCKED"
	return cause
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
