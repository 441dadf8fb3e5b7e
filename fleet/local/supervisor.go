package local

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/execute"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// RunSupervisor runs one run of an agent and records its outcome; it is the
// body of the hidden `agentinfra agent run-supervisor` command, which Start
// launches in a session of its own. ctx is canceled on SIGTERM (stop, when
// the agent CLI is not known yet): the CLI's process group is then
// terminated and killed by the runner.
//
// The supervisor is a child subreaper (package contain): when the CLI has
// ended, every process of the run's scope and every descendant left below
// the supervisor is killed, so nothing the agent started (a server, a
// `setsid` or daemonized process) outlives the run. The run itself is
// package execute's: the supervisor plans it from its run file and keeps
// its books there (supervisorBooks). The error is the books' (the run's own end
// is in its record).
func RunSupervisor(ctx context.Context, ws *workspace.Workspace, name, runID string, opts Options) error {
	f := New(ws, opts)
	run, prompt, system, err := f.takeRun(ctx, name, runID)
	if err != nil || run == nil {
		return err
	}
	if err := contain.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "agentinfra: not a child subreaper (%v): only the run's marked processes are ended with it\n", err)
	}
	rec := run.record(f.p, name)
	books := &supervisorBooks{f: f, name: name, runID: runID, rec: rec}
	x := &execute.Planned{WS: f.ws, Record: rec, Supervised: run.ApprovalMode == runner.ApprovalAsk,
		Owner: mdtext.Or(run.Owner, supervision.CurrentUser(f.getenv())), Getenv: f.getenv(), SessionAgent: run.AgentName,
		Executor: f.opts.Executor, Exclusive: true, Bus: f.opts.Bus, Now: f.opts.Now, Books: books, BooksOpen: true}
	cleanup, err := plan(x, run, prompt, system)
	if err != nil {
		execute.Fail(ctx, x, err)
		return books.err
	}
	defer cleanup()
	if x.Resume, err = run.resumeOf(); err != nil {
		execute.Fail(ctx, x, err)
		return books.err
	}
	x.Completed = func(ctx context.Context, res runner.Result) []string { return f.recordChange(ctx, name, run, res) }
	stopWatching := f.recordChild(ctx, name, runID)
	execute.Run(ctx, x)
	stopWatching()
	f.afterRun(ctx, name, run, rec)
	return books.err
}

// takeRun marks run runID of agent name running, under the agent's lock,
// and reads its prompt and system prompt; nil (and nothing to do) when the
// prompt is gone, the run then recorded as failed.
func (f *Fleet) takeRun(ctx context.Context, name, runID string) (run *runRecord, prompt, system string, err error) {
	self := os.Getpid()
	err = statefile.WithLock(ctx, f.p.agentLock(name), func() error {
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
		b, err := os.ReadFile(r.PromptFile)
		if err != nil {
			return failed("the prompt file is gone: " + err.Error())
		}
		if r.SystemPromptFile != "" {
			s, err := os.ReadFile(r.SystemPromptFile)
			if err != nil {
				return failed("the system prompt file is gone: " + err.Error())
			}
			system = string(s)
		}
		now := f.now()
		r.Status, r.StartedAt = fleet.RunRunning, &now
		if err := statefile.WriteJSON(f.p.file(name, runFile), r); err != nil {
			return err
		}
		run, prompt = r, string(b)
		return nil
	})
	if err != nil {
		return nil, "", "", err
	}
	return run, prompt, system, nil
}

// plan builds the command of a run from its run file (its CLI headless in
// its worktree, the role file in the run's folder as the CLI's system
// prompt file: runner.Prepare would write a temporary one, which a
// supervisor killed mid-run leaves in the system's temp folder). cleanup
// removes what Prepare wrote.
func plan(x *execute.Planned, run *runRecord, prompt, system string) (cleanup func(), err error) {
	rn, err := agentcli.Runner(run.CLI)
	if err != nil {
		return nil, agenterr.Invalidf("cli", "%v", err)
	}
	req := runner.Request{
		Prompt: prompt, SystemPrompt: system, SystemPromptFile: run.SystemPromptFile, Model: run.Model, Session: run.Session, ApprovalMode: run.ApprovalMode, Dir: run.Dir,
		Env: run.Env, Binary: run.Binary, Timeout: run.Timeout, KillGrace: run.KillGrace,
	}
	x.Runner, x.Request = rn, req
	req, cmd, cleanup, err := runner.Prepare(rn, req)
	if err != nil {
		return nil, err
	}
	x.Request, x.Command = req, cmd
	x.Record.SetCommand(req, cmd)
	return cleanup, nil
}

// recordChild records the agent CLI in the run file once it runs, so that
// stop can signal its group and a dead supervisor's leftovers can be
// killed. The function it returns stops watching.
func (f *Fleet) recordChild(ctx context.Context, name, runID string) (stop func()) {
	self := os.Getpid()
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			kids := childrenOf(self)
			if len(kids) == 0 {
				continue
			}
			child := refOf(kids[0])
			statefile.WithLock(context.WithoutCancel(ctx), f.p.agentLock(name), func() error {
				var cur runRecord
				if ok, _ := statefile.ReadJSON(f.p.file(name, runFile), &cur); !ok || cur.ID != runID {
					return nil
				}
				cur.Child = child
				return statefile.WriteJSON(f.p.file(name, runFile), &cur)
			})
			return
		}
	}()
	return func() {
		close(done)
		watch.Wait()
	}
}

// supervisorBooks are the fleet's books of a run its supervisor executes
// (execute.Books): the run file, written when the run started (the task
// claimed then), and the history.
type supervisorBooks struct {
	f           *Fleet
	name, runID string
	rec         *agentrun.Record
	// st is the store Open opened (nil: none), closed before the end is
	// booked: the agent is idle once it is, with nothing of the run open.
	st *store.Store
	// err is the failure to book the run's end.
	err error
}

func (b *supervisorBooks) Claim(context.Context) error { return nil } // at start

// Open keeps the record in the store's runs table (a fleet run needs the
// store: its history is there), the log next to the agent.
func (b *supervisorBooks) Open(ctx context.Context) (agentrun.Recorder, error) {
	st, err := b.f.runStore(ctx)
	if err != nil {
		return nil, err
	}
	b.st = st
	return agentrun.Stored{Store: st, LogPath: b.f.p.logFile(b.name, b.runID)}, nil
}

// Close ends the run under the agent's lock, unless a stop that gave up
// on the supervisor recorded it meanwhile; a run a stop asked for ends
// stopped. The end is booked in the database now at the store's path
// (endLocked opens it afresh): when the one Open opened was deleted or
// replaced meanwhile, the record says so (issue 27: the run's record, its
// history and its task agree, where every later command reads them).
func (b *supervisorBooks) Close(ctx context.Context, end func(stopped bool) error) error {
	f := b.f
	closeStore := func() {}
	if b.st != nil {
		if lost := b.st.LostNote(); lost != "" {
			b.rec.Warnings = append(b.rec.Warnings, lost)
		}
		// Open through the run's end, which stores the run's conclusion
		// before the task moves (the reap of a supervisor that dies then
		// books the run as it ended).
		closeStore = sync.OnceFunc(func() { b.st.Close() })
	}
	defer closeStore()
	b.err = statefile.WithLock(ctx, f.p.agentLock(b.name), func() error {
		a, r, err := f.loadAgent(b.name)
		if err != nil {
			return err
		}
		if r == nil || r.ID != b.runID {
			return nil // recorded already
		}
		taskErr := end(r.StopRequested)
		closeStore()
		return f.endLocked(ctx, a, r, b.rec, taskErr)
	})
	return b.err
}
