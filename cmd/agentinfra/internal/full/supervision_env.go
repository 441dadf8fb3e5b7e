package full

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/supervised"
	"github.com/agentinfra/agentinfra/workspace"
)

// supervisionEnv is what the supervision commands share: the workspace, the
// supervision service (its store opened on demand: only these commands pay
// for the database), and who is at the terminal.
type supervisionEnv struct {
	ws   *workspace.Workspace
	svc  *supervision.Service
	user supervision.Actor
}

func (f *Factory) supervision(ctx context.Context) (*supervisionEnv, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	// Sessions whose supervisor died are ended first: what is listed and
	// decided is what really waits.
	svc, err := supervision.Open(ctx, ws, supervision.Options{Getenv: f.Getenv, Resume: f.resumer(ws).Func(), Reap: f.resumer(ws).Reaper(func(r supervised.Reaped) {
		fmt.Fprintf(f.IO.ErrOut, "agentinfra: session %d is interrupted: %s", r.Session.ID, r.Session.EndReason)
		if r.Task != "" {
			fmt.Fprintf(f.IO.ErrOut, "; task %s is BLOCKED", r.Task)
		}
		if r.Killed > 0 {
			fmt.Fprintf(f.IO.ErrOut, "; %d process(es) of its run were killed", r.Killed)
		}
		fmt.Fprintln(f.IO.ErrOut)
		for _, w := range r.Warnings {
			fmt.Fprintf(f.IO.ErrOut, "agentinfra: warning: %s\n", w)
		}
	}, f.resumeReport())})
	if err != nil {
		return nil, err
	}
	return &supervisionEnv{ws: ws, svc: svc, user: supervision.Person(supervision.CurrentUser(f.Getenv), supervision.SurfaceTerminal)}, nil
}

func (e *supervisionEnv) Close() { e.svc.Close() }

// parseID reads a request or session ID ("12" or "#12").
func parseID(kind, s string) (int64, error) {
	if len(s) > 0 && s[0] == '#' {
		s = s[1:]
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, cli.UsageErrorf("%s ID %q is not a number; `agentinfra inbox` and `agentinfra session list` show them", kind, s)
	}
	return id, nil
}
