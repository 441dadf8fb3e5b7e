package full

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/backends"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
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

// supervision is the service of the person's surfaces: this workspace's
// sessions, and those of its supervised agents' hosts on Coder (one inbox
// across machines; docs/coder.md).
func (f *Factory) supervision(ctx context.Context) (*supervisionEnv, error) {
	return f.openSupervision(ctx, true)
}

// supervisionHere is the service of this workspace's sessions only (what
// `agent host` serves).
func (f *Factory) supervisionHere(ctx context.Context) (*supervisionEnv, error) {
	return f.openSupervision(ctx, false)
}

func (f *Factory) openSupervision(ctx context.Context, withHosts bool) (*supervisionEnv, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	o := supervision.Options{Getenv: f.Getenv, Resume: f.resumer(ws).Func(), Reap: f.resumer(ws).Reaper(func(r supervised.Reaped) {
		fmt.Fprintf(f.IO.ErrOut, "agentinfra: session %d is %s: %s", r.Session.ID, r.Session.Status, r.Session.EndReason)
		if r.Task != "" {
			fmt.Fprintf(f.IO.ErrOut, "; task %s is %s", r.Task, r.TaskStatus)
		}
		if r.Killed > 0 {
			fmt.Fprintf(f.IO.ErrOut, "; %d process(es) of its run were killed", r.Killed)
		}
		fmt.Fprintln(f.IO.ErrOut)
		for _, w := range r.Warnings {
			fmt.Fprintf(f.IO.ErrOut, "agentinfra: warning: %s\n", w)
		}
	}, f.resumeReport())}
	if withHosts {
		hosts, warnings := f.hostsOf(ctx, ws)
		for _, w := range warnings {
			fmt.Fprintf(f.IO.ErrOut, "agentinfra: warning: %s\n", w)
		}
		o.Hosts = hosts
	}
	// Sessions whose supervisor died are ended first: what is listed and
	// decided is what really waits.
	svc, err := supervision.Open(ctx, ws, o)
	if err != nil {
		return nil, err
	}
	return &supervisionEnv{ws: ws, svc: svc, user: supervision.Person(supervision.CurrentUser(f.Getenv), supervision.SurfaceTerminal)}, nil
}

// hostsOf are the hosts of the workspace's supervised agents on Coder,
// when it has any (a record says so without asking Coder); what keeps one
// from being reached is a warning, never a failure of the local inbox.
func (f *Factory) hostsOf(ctx context.Context, ws *workspace.Workspace) ([]supervision.HostEntry, []string) {
	if !coder.HasSupervised(ws) {
		return nil, nil
	}
	be, err := backends.Open(ws, backends.Options{Name: fleet.BackendCoder, Getenv: f.Getenv})
	if err != nil {
		return nil, []string{"the workspace has supervised agents on Coder, but their items are not shown: " + err.Error()}
	}
	cb, ok := be.(*coder.Backend)
	if !ok {
		return nil, nil
	}
	addrs, warnings, err := cb.Hosts(ctx)
	if err != nil {
		warnings = append(warnings, "the supervised agents on Coder could not be listed, their items are not shown: "+err.Error())
	}
	stateDir := filepath.Join(ws.AgentDir(), "state", "hosts")
	var out []supervision.HostEntry
	for _, a := range addrs {
		c, err := host.New(host.Options{Name: a.Name, URL: a.URL, Locate: a.Locate, Token: a.Token, Header: a.Header, HTTPClient: a.HTTPClient, StateDir: stateDir, Now: f.Now})
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		out = append(out, supervision.HostEntry{Number: a.Number, Host: c})
	}
	return out, warnings
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
