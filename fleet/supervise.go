package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/workspace"
)

// Supervise runs one run of an agent and records its outcome; it is the
// body of the hidden `agentinfra agent supervise` command, which Start
// launches in a session of its own. ctx is canceled on SIGTERM (stop, when
// the agent CLI is not known yet): the CLI's process group is then
// terminated and killed by the runner.
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
		if prompt, err = os.ReadFile(r.PromptFile); err != nil {
			return f.finishLocked(ctx, a, r, RunFailed, "the prompt file is gone: "+err.Error(), nil)
		}
		if r.SystemPromptFile != "" {
			if system, err = os.ReadFile(r.SystemPromptFile); err != nil {
				prompt = nil
				return f.finishLocked(ctx, a, r, RunFailed, "the system prompt file is gone: "+err.Error(), nil)
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
	res, runErr := runAgent(ctx, runRequest{
		CLI: run.CLI, Binary: run.Binary, Dir: run.Dir, Prompt: string(prompt), SystemPrompt: string(system), Model: run.Model, Session: run.Session,
		ApprovalMode: run.ApprovalMode, Env: run.Env, Timeout: run.Timeout, KillGrace: run.KillGrace,
	}, nil)
	close(execDone)
	watch.Wait()
	if b, err := json.MarshalIndent(res.Raw, "", "  "); err == nil {
		os.WriteFile(filepath.Join(f.p.runsDir(name), runID+".result.json"), append(b, '\n'), 0o644)
	}

	return withLock(context.WithoutCancel(ctx), f.p.agentLock(name), func() error {
		a, r, err := f.loadAgent(name)
		if err != nil {
			return err
		}
		if r == nil || r.ID != runID {
			return nil // recorded already (a stop that gave up on us)
		}
		status, reason := RunCompleted, "completed"
		switch {
		case r.StopRequested:
			status, reason = RunStopped, "stopped"
		case runErr != nil:
			status, reason = RunFailed, runErr.Error()
		case res.TimedOut:
			status, reason = RunFailed, "timed out: "+res.Error
		case res.Canceled:
			status, reason = RunStopped, "canceled: "+res.Error
		case !res.OK:
			status, reason = RunFailed, res.Error
		}
		return f.finishLocked(ctx, a, r, status, reason, &res)
	})
}
