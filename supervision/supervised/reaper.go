package supervised

import (
	"context"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// Reaper is Reap as supervision.Open runs it once the store is open
// (supervision.Options.Reap): each session it ends goes to report.
func Reaper(ws *workspace.Workspace, report func(Reaped)) func(context.Context, *store.Store) error {
	return func(ctx context.Context, st *store.Store) error {
		reaped, err := Reap(ctx, ws, st)
		for _, r := range reaped {
			report(r)
		}
		return err
	}
}
