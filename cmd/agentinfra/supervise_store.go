package main

import (
	"context"
	"strconv"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// supervisionEnv is what the supervision commands share: the workspace, its
// supervision config, the store (opened on demand: only these commands pay
// for the database), and who is at the terminal.
type supervisionEnv struct {
	ws   *workspace.Workspace
	conf supervision.Config
	st   *store.Store
	user string
}

func (f *Factory) supervision(ctx context.Context) (*supervisionEnv, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	conf, err := supervision.LoadConfig(ws)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenWorkspace(ctx, ws, supervision.StoreOptions(conf))
	if err != nil {
		return nil, err
	}
	return &supervisionEnv{ws: ws, conf: conf, st: st, user: supervision.CurrentUser(f.Getenv)}, nil
}

func (e *supervisionEnv) Close() { e.st.Close() }

// parseID reads a request or session ID ("12" or "#12").
func parseID(kind, s string) (int64, error) {
	if len(s) > 0 && s[0] == '#' {
		s = s[1:]
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf("%s ID %q is not a number; `agentinfra inbox` and `agentinfra session list` show them", kind, s)
	}
	return id, nil
}
