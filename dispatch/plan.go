package dispatch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Plan is one dispatch decided and not yet started: nothing has been written.
// Its Outcome is what a dry run reports.
type Plan struct {
	ws   *workspace.Workspace
	opts Options
	// At is when the dispatch happens: the claim's Updated and the tracking
	// note's name.
	At time.Time
	// Task is the row as read; Claimed is the row as the claim will leave it
	// (IN_PROGRESS, with Mention), which the prompt shows.
	Task, Claimed matrix.Task
	Mention       string
	// TaskDir is the task folder ("" when the task has none yet).
	TaskDir string
	Prompt  prompt.Prompt
	Runner  runner.Runner
	Request runner.Request
	// Command is built once from Request and is what runs.
	Command runner.Command
	Outcome Outcome
	// promptIfNew is a resumed run's prompt for a CLI that cannot continue
	// its session (resume.go).
	promptIfNew string
}

// NewPlan checks that the task may be dispatched and decides the run: the
// CLI and approval mode, the mode and model (and why), the prompt as it will
// be sent, and the command. The returned Plan is never nil; on error its
// Outcome holds what was decided so far (Outcome.Outcome is "").
func NewPlan(ctx context.Context, ws *workspace.Workspace, opts Options) (*Plan, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Getenv = getenvOr(opts.Getenv)
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	id := strings.TrimSpace(opts.ID)
	p := &Plan{ws: ws, opts: opts, At: opts.Now()}
	p.Outcome = Outcome{ID: id, DryRun: opts.DryRun, PromptParts: []prompt.Part{}, Record: agentrun.Record{
		Caller: agentrun.CallerDispatch, Actor: opts.Actor, TaskID: id, Argv: []string{}, Env: []string{}, Warnings: []string{},
		ApprovalMode: mdtext.Or(opts.ApprovalMode, runner.ApprovalDefault), Timeout: opts.Timeout.String(), Session: opts.Session}}
	if id == "" {
		return p, errors.New("no task ID given: pass the ID of a matrix row (see `agentinfra task list`)")
	}
	r, err := agentcli.Runner(opts.CLI)
	if err != nil {
		return p, err
	}
	p.Runner, p.Outcome.CLI = r, r.Name()
	if err := runner.CheckApproval(opts.ApprovalMode); err != nil {
		return p, err
	}

	store, err := tasksvc.OpenStore(ws)
	if err != nil {
		return p, err
	}
	doc, err := store.Load(ctx)
	if err != nil {
		return p, err
	}
	task, ok := doc.Task(id)
	if !ok {
		return p, doc.NotFound(id)
	}
	p.Task = task
	p.Outcome.StatusBefore, p.Outcome.StatusAfter = task.Status, task.Status
	if err := checkWorkflow(doc.Vocabulary()); err != nil {
		return p, err
	}
	mode := strings.TrimSpace(opts.Mode)
	if mode == "" {
		mode = task.Mode
	}
	p.Outcome.Mode = mode
	p.Mention = "@" + mdtext.Or(mode, r.Name())
	if err := tasksvc.CanClaim(doc.Vocabulary(), task, p.Mention, p.claimOptions()); err != nil {
		return p, dispatchRefusal(err)
	}
	dir, archived := tasksvc.Folder(ws, doc, id)
	if archived {
		return p, fmt.Errorf("%w: task %s is archived (%s); restore its folder to .agent/tasks/ first", ErrRefused, id, ws.RelPath(dir))
	}
	p.TaskDir = dir

	p.Outcome.Agent, p.Outcome.Summary = p.Mention, mdtext.Shorten(id+": "+task.Description, 120)
	p.Outcome.Model, p.Outcome.ModelReason, err = agentrun.ChooseModel(ctx, ws, r.Name(), mode, task.Difficulty, opts.Model, opts.Getenv)
	if err != nil {
		return p, err
	}
	// The prompt shows the row as the claim will leave it: the claim's own
	// change on the parsed matrix, not written.
	claimed, err := tasksvc.PreviewClaim(doc, id, p.Mention, p.claimOptions(), p.At)
	if err != nil {
		return p, dispatchRefusal(err)
	}
	if err := p.build(ctx, claimed); err != nil {
		return p, err
	}
	if opts.DryRun {
		p.Outcome.Outcome = OutcomeDryRun
	}
	return p, nil
}

// checkWorkflow refuses a matrix whose vocabulary cannot say the statuses
// a dispatch moves a task through (IN_PROGRESS may be DOING in a
// workspace's words, but it must have one), before anything is written.
func checkWorkflow(v *matrix.Vocabulary) error {
	for _, s := range []string{tasksvc.StatusInProgress, tasksvc.StatusReview, tasksvc.StatusBlocked, tasksvc.StatusDone} {
		if _, err := tasksvc.WorkflowStatus(v, s); err != nil {
			return err
		}
	}
	return nil
}

// build assembles the prompt for the row t and the command that sends it.
func (p *Plan) build(ctx context.Context, t matrix.Task) error {
	opts := p.opts
	pr, err := prompt.Assemble(ctx, p.ws, prompt.Input{
		// The task's own mode is left to Assemble, which goes on without a
		// mode file that does not exist (with a warning).
		Task: t, TaskDir: p.TaskDir, Mode: strings.TrimSpace(opts.Mode), TaskOverride: opts.TaskOverride,
		ContextFiles: opts.ContextFiles, SkipMissingSkills: true, Getenv: opts.Getenv,
	})
	if err != nil {
		return err
	}
	p.Claimed, p.Prompt = t, pr
	o := &p.Outcome
	o.Prompt = pr.Text
	o.TaskOverride, o.ContextFiles = opts.TaskOverride, opts.ContextFiles
	if opts.Resume != nil {
		p.promptIfNew = pr.Text + "\n\n" + opts.Resume.Done
		o.Prompt = p.resumedPrompt()
	}
	o.PromptParts = append([]prompt.Part{}, pr.Parts...)
	o.Warnings = append([]string{}, pr.Warnings...)
	for _, s := range pr.MissingSkills {
		o.Warnings = append(o.Warnings, fmt.Sprintf("skill %s could not be loaded; the prompt says so", s))
	}

	p.Request = runner.Request{
		Prompt: o.Prompt, Model: o.Model, Session: opts.Session, ApprovalMode: opts.ApprovalMode,
		Dir: p.ws.Root, Env: opts.Env, CleanEnv: opts.CleanEnv, Binary: opts.Binary,
		ExtraArgs: opts.ExtraArgs, Timeout: opts.Timeout, KillGrace: opts.KillGrace,
	}
	p.Command, err = p.Runner.Command(p.Request)
	if err != nil {
		return err
	}
	o.SetCommand(p.Request, p.Command)
	o.Binary = opts.Binary
	if o.Binary == "" {
		bin, lerr := runner.LookupCLIEnv(p.Command.Argv[0], opts.Getenv)
		switch {
		case lerr == nil:
			o.Binary, p.Request.Binary = bin, bin
		case opts.DryRun:
			o.Warnings = append(o.Warnings, lerr.Error())
		default:
			return lerr
		}
	}
	return nil
}

// rebuildIfChanged assembles the prompt and command again when the row the
// claim left differs from the one planned (someone changed it in between),
// so that the agent is told what the matrix says.
func (p *Plan) rebuildIfChanged(ctx context.Context, claimed matrix.Task) error {
	if reflect.DeepEqual(claimed, p.Claimed) {
		return nil
	}
	return p.build(ctx, claimed)
}
