package supervised

import (
	"context"
	"os"

	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/supervision"
)

// markWaiting keeps the session's waiting marker (package waiting) for the
// commands that open no database (`task list`, the fleet's `agent list`):
// written when the session starts to wait for a person, replaced when it
// waits for something else, removed when nothing waits — on each change of
// the store, from any process — and removed when ctx ends. The channel
// closes once the marker is gone.
func (r *Run) markWaiting(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	svc, err := supervision.New(supervision.Options{Store: r.st, Workspace: r.ws})
	if err != nil {
		close(done)
		return done
	}
	changes, err := r.st.Changes(ctx)
	if err != nil {
		close(done)
		return done
	}
	root, id := r.ws.Root, r.ses.ID
	go func() {
		defer close(done)
		defer waiting.Clear(root, id)
		var last waiting.Item
		for {
			if all, err := svc.Waiting(ctx); err == nil {
				it, ok := all[id]
				switch {
				case ok && it != last:
					if ses, err := r.st.Session(ctx, id); err == nil {
						// A marker that cannot be written leaves the light
						// commands saying less; the store still says it all.
						_ = waiting.Write(root, waiting.Mark{Item: it, Session: id, Task: ses.TaskID, Agent: ses.Agent, RunID: ses.RunID, PID: os.Getpid()})
						last = it
					}
				case !ok && last != (waiting.Item{}):
					waiting.Clear(root, id)
					last = waiting.Item{}
				}
			}
			select {
			case <-ctx.Done():
				return
			case _, ok := <-changes:
				if !ok {
					return
				}
			}
		}
	}()
	return done
}
