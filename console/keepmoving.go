package console

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
)

// StoreSteering is issue 22's steering as `agentinfra steer` does it: the
// message is queued in the store (the session's supervisor delivers it as
// the agent's next message) and published on the bus.
type StoreSteering struct {
	Store  *store.Store
	Config supervision.Config
	Bus    *events.Bus
	Root   string
}

// Steer queues text for session id from person by.
func (s StoreSteering) Steer(ctx context.Context, id int64, by, text string) error {
	m, err := s.Store.Steer(ctx, id, text, by, store.SurfaceWeb)
	if err != nil {
		return err
	}
	if s.Bus != nil {
		s.Bus.Publish(events.Event{Kind: events.SteeringChanged, Root: s.Root, SessionID: id, ItemID: m.ID, Status: m.Status, Text: m.Text, Actor: by})
	}
	return nil
}

// StoreCheckpoints are issue 22's checkpoints of a session's worktree
// (package checkpoint). Restoring a live session's checkpoint is refused
// with what to do: the page's Stop first (the terminal's `checkpoint
// restore` stops the run itself).
type StoreCheckpoints struct {
	Store  *store.Store
	Config supervision.Config
}

func (c StoreCheckpoints) List(ctx context.Context, id int64) ([]Checkpoint, error) {
	cps, err := c.Store.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, 0, len(cps))
	for _, cp := range cps {
		label := cp.Label
		if label == "" {
			label = "checkpoint " + strconv.FormatInt(cp.ID, 10)
		}
		out = append(out, Checkpoint{ID: strconv.FormatInt(cp.ID, 10), Label: label, CreatedAt: cp.CreatedAt})
	}
	return out, nil
}

func (c StoreCheckpoints) find(ctx context.Context, id int64, cpID string) (store.Checkpoint, error) {
	n, err := strconv.ParseInt(cpID, 10, 64)
	if err != nil {
		return store.Checkpoint{}, badInput("checkpoint %q is not a number", cpID)
	}
	cp, err := c.Store.CheckpointByID(ctx, n)
	if err != nil {
		return cp, err
	}
	if cp.SessionID != id {
		return cp, badInput("checkpoint %d is not session %d's", n, id)
	}
	return cp, nil
}

func (c StoreCheckpoints) Diverged(ctx context.Context, id int64, cpID string) ([]string, error) {
	cp, err := c.find(ctx, id, cpID)
	if err != nil {
		return nil, err
	}
	changes, err := checkpoint.Diverged(ctx, cp)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ch := range changes {
		out = append(out, ch.Status+" "+ch.Path)
	}
	return out, nil
}

func (c StoreCheckpoints) Restore(ctx context.Context, id int64, cpID, by string, force bool) error {
	cp, err := c.find(ctx, id, cpID)
	if err != nil {
		return err
	}
	ses, err := c.Store.Session(ctx, id)
	if err != nil {
		return err
	}
	if !supervision.MayControl(c.Config, by, ses) {
		return fmt.Errorf("%w: %s may not restore session %d's checkpoint: only its owner %s or an operator may", store.ErrNotAllowed, store.Handle(by), id, store.Handle(ses.Owner))
	}
	if ses.Live() {
		return fmt.Errorf("%w: session %d is %s: stop it first (its agent must not write while the tree is put back), then restore", store.ErrBadTransition, id, ses.Status)
	}
	_, err = checkpoint.Restore(ctx, c.Store, cp, checkpoint.RestoreOptions{Force: force, By: by, Surface: store.SurfaceWeb})
	return err
}
