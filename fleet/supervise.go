package fleet

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// Supervise runs one run of an agent and records its outcome; it is the
// body of the hidden `agentinfra agent supervise` command, which Start
// launches in a session of its own. ctx is canceled on SIGTERM (stop, when
// the agent CLI is not known yet): the CLI's process group is then
// terminated and killed by the runner.
//
// The supervisor is a child subreaper (package contain): when the CLI has
// ended, every process of the run's scope and every descendant left below
// the supervisor is killed, so nothing the agent started (a server, a
// `setsid` or daemonized process) outlives the run.
func Supervise(ctx context.Context, ws *workspace.Workspace, name, runID string, opts Options) error {
	f := New(ws, opts)
	self := os.Getpid()
	var run runRecord
	var prompt, system []byte
	err := withLock(ctx, f.p.agentLock(name), func() error {
		a, r, err := f.loadAgent(name)
		if err != nil {
			return err
		}
		if r == nil || r.ID != runID || r.Supervisor.PID != self {
			return fmt.Errorf("run %s of agent %s is not this supervisor's (pid %d)", runID, a.Name, self)
		}
		failed := func(reason string) error {
			rec := r.record(f.p, a.Name)
			rec.Interrupted(reason, f.now())
			return f.finishLocked(ctx, a, r, rec, "")
		}
		if prompt, err = os.ReadFile(r.PromptFile); err != nil {
			return failed("the prompt file is gone: " + err.Error())
		}
		if r.SystemPromptFile != "" {
			if system, err = os.ReadFile(r.SystemPromptFile); err != nil {
				prompt = nil
				return failed("the system prompt file is gone: " + err.Error())
			}
		}
		now := f.now()
		r.Status, r.StartedAt = RunRunning, &now
		run = *r
		return writeJSON(f.p.file(name, runFile), r)
	})
	if err != nil || prompt == nil {
		return err
	}
	if err := contain.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "agentinfra: not a child subreaper (%v): only the run's marked processes are ended with it\n", err)
	}

	// Record the agent CLI once it runs, so stop can signal its group and a
	// dead supervisor's leftovers can be killed.
	execDone := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-execDone:
				return
			case <-tick.C:
			}
			kids := childrenOf(self)
			if len(kids) == 0 {
				continue
			}
			child := refOf(kids[0])
			withLock(context.WithoutCancel(ctx), f.p.agentLock(name), func() error {
				var cur runRecord
				if ok, _ := readJSON(f.p.file(name, runFile), &cur); !ok || cur.ID != runID {
					return nil
				}
				cur.Child = child
				return writeJSON(f.p.file(name, runFile), &cur)
			})
			return
		}
	}()
	rec := run.record(f.p, name)
	res, runErr := f.exec(ctx, &run, rec, string(prompt), string(system))
	close(execDone)
	watch.Wait()

	return withLock(context.WithoutCancel(ctx), f.p.agentLock(name), func() error {
		a, r, err := f.loadAgent(name)
		if err != nil {
			return err
		}
		if r == nil || r.ID != runID {
			return nil // recorded already (a stop that gave up on us)
		}
		rec.Conclude(res, runErr, r.StopRequested, f.now())
		return f.finishLocked(ctx, a, r, rec, "")
	})
}

// exec runs the agent CLI of run headless in its worktree through
// agentrun (its own process group, the run's marker, the log, the bus);
// ctx cancellation kills its group. rec gets the command as it ran.
func (f *Fleet) exec(ctx context.Context, run *runRecord, rec *agentrun.Record, prompt, system string) (res runner.Result, err error) {
	rn, err := agentcli.Runner(run.CLI)
	if err != nil {
		return runner.Failed(gemini.Runner{}, runner.Request{}, badInput("cli", "%v", err))
	}
	// The role file in the run's folder is the CLI's system prompt file
	// (runner.Prepare would write a temporary one, which a supervisor
	// killed mid-run leaves in the system's temp folder).
	req := runner.Request{
		Prompt: prompt, SystemPrompt: system, SystemPromptFile: run.SystemPromptFile, Model: run.Model, Session: run.Session, ApprovalMode: run.ApprovalMode, Dir: run.Dir,
		Env: run.Env, Binary: run.Binary, Timeout: run.Timeout, KillGrace: run.KillGrace,
	}
	req, cmd, cleanup, err := runner.Prepare(rn, req)
	if err != nil {
		return runner.Failed(rn, req, err)
	}
	defer cleanup()
	rec.Argv = runner.RedactArgv(cmd.Argv, cmd.PromptArg)
	rec.Env = runner.RedactEnv(append(append([]string{}, req.Env...), cmd.Env...))
	rec.Stdin, rec.PromptBytes = cmd.Stdin != "", len(prompt)
	st, err := f.runStore(ctx)
	if err != nil {
		return runner.Failed(rn, req, err)
	}
	defer st.Close()
	executor := f.opts.Executor
	if run.ApprovalMode == runner.ApprovalAsk {
		// A supervised run: this supervisor is its session's; every
		// request the policy does not allow waits for a person.
		sup, err := supervised.Begin(ctx, f.ws, supervised.Params{Owner: mdtext.Or(run.Owner, supervision.CurrentUser(f.getenv())),
			CLI: run.CLI, Agent: run.AgentName, TaskID: run.TaskID, RunID: run.ID, Title: run.Summary, Getenv: f.getenv()})
		if err != nil {
			return runner.Failed(rn, req, fmt.Errorf("the supervised run was refused: %w", err))
		}
		executor = sup
		defer func() { sup.End(ctx, runEnd(res)) }()
	}
	x := &agentrun.Run{Record: rec, Root: f.ws.Root, Recorder: agentrun.Stored{Store: st, LogPath: f.p.logFile(run.AgentName, run.ID)},
		Exclusive: true, Now: f.opts.Now, Bus: f.opts.Bus, Executor: executor}
	return x.Exec(ctx, rn, req, cmd, nil)
}

// runEnd says in a line how a run ended (a session's end reason).
func runEnd(res runner.Result) string {
	if res.Error != "" {
		return fmt.Sprintf("exit code %d: %s", res.ExitCode, res.Error)
	}
	return fmt.Sprintf("completed (exit code %d)", res.ExitCode)
}
