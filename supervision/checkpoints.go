package supervision

import (
	"context"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
)

// Checkpoints lists a session's checkpoints (0: every session's), oldest
// first.
func (s *Service) Checkpoints(ctx context.Context, sessionID int64) ([]Checkpoint, error) {
	return s.st.Checkpoints(ctx, sessionID)
}

// Checkpoint reads one checkpoint.
func (s *Service) Checkpoint(ctx context.Context, id int64) (Checkpoint, error) {
	return s.st.CheckpointByID(ctx, id)
}

// Diverged lists the files changed since checkpoint c.
func (s *Service) Diverged(ctx context.Context, c Checkpoint) ([]CheckpointChange, error) {
	return checkpoint.Diverged(ctx, c)
}

// CreateCheckpoint snapshots the worktree of session id (package
// checkpoint), CheckpointChanged.
func (s *Service) CreateCheckpoint(ctx context.Context, a Actor, id int64, label string) (Checkpoint, error) {
	ses, err := s.st.Session(ctx, id)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := s.authorise(ctx, a, ses, fmt.Sprintf("checkpoint session %d", id)); err != nil {
		return Checkpoint{}, err
	}
	c, err := checkpoint.Create(ctx, s.st, id, ses.Workspace, label, a.Name)
	if err != nil {
		return c, err
	}
	s.publish(events.Event{Kind: events.CheckpointChanged, SessionID: id, ItemID: c.ID, Status: "created", Text: c.Label, Actor: a.Name})
	return c, nil
}

// Restore is what RestoreCheckpoint puts back.
type Restore struct {
	Checkpoint int64
	// Session, when set, is the session the checkpoint must be of (a page
	// of that session asked).
	Session int64
	// Force restores over files changed since the checkpoint; without it
	// they refuse the restore with a *DivergedError before anything else.
	Force bool
	// StopLive stops a live session's run first and waits for its
	// supervisor to exit; without it a live session refuses the restore
	// (its agent must not write while the tree is put back).
	StopLive bool
}

// RestoreCheckpoint puts a session's worktree back as a checkpoint
// recorded it: authorise, the diverged files (refused without Force), the
// live run (stopped with StopLive), the restore, CheckpointChanged. It
// returns the checkpoint and the files it changed.
func (s *Service) RestoreCheckpoint(ctx context.Context, a Actor, r Restore) (Checkpoint, []CheckpointChange, error) {
	c, err := s.st.CheckpointByID(ctx, r.Checkpoint)
	if err != nil {
		return c, nil, err
	}
	if r.Session != 0 && c.SessionID != r.Session {
		return c, nil, fmt.Errorf("%w: checkpoint %d is not session %d's", store.ErrNotFound, c.ID, r.Session)
	}
	ses, err := s.st.Session(ctx, c.SessionID)
	if err != nil {
		return c, nil, err
	}
	if err := s.authorise(ctx, a, ses, fmt.Sprintf("restore session %d's checkpoint", ses.ID)); err != nil {
		return c, nil, err
	}
	if !r.Force {
		changes, err := checkpoint.Diverged(ctx, c)
		if err != nil {
			return c, nil, err
		}
		if len(changes) > 0 {
			return c, nil, &DivergedError{Checkpoint: c.ID, Changes: changes}
		}
	}
	if ses.Live() {
		if !r.StopLive {
			return c, nil, fmt.Errorf("%w: session %d is %s: stop it first (its agent must not write while the tree is put back), then restore", store.ErrBadTransition, ses.ID, ses.Status)
		}
		if err := s.stopAndWait(ctx, a, ses, fmt.Sprintf("restoring checkpoint %d", c.ID)); err != nil {
			return c, nil, err
		}
	}
	changed, err := checkpoint.Restore(ctx, s.st, c, checkpoint.RestoreOptions{Force: r.Force, By: a.Name, Surface: a.Surface})
	if err != nil {
		return c, changed, err
	}
	s.publish(events.Event{Kind: events.CheckpointChanged, SessionID: c.SessionID, ItemID: c.ID, Status: "restored", Actor: a.Name})
	return c, changed, nil
}

// Retention is how long ended sessions are kept
// (supervision.retention_days).
func (s *Service) Retention() (time.Duration, error) {
	cfg, err := keepmoving.LoadConfig(s.ws)
	if err != nil {
		return 0, err
	}
	return keepmoving.Retention(cfg), nil
}

// Purge deletes the sessions that ended before before, with all that is
// theirs (their checkpoints' git refs too); dryRun counts them only. It is
// no one session's change: any person may purge (the caller check
// applies). SessionsPurged when sessions went.
func (s *Service) Purge(ctx context.Context, a Actor, before time.Time, dryRun bool) (PurgeReport, error) {
	if err := s.check(ctx, a); err != nil {
		return PurgeReport{}, err
	}
	rep, err := s.st.Purge(ctx, store.PurgeOptions{Before: before, DryRun: dryRun, By: a.Name, BeforeDelete: checkpoint.DeleteRefs})
	if err != nil {
		return rep, err
	}
	if !dryRun && rep.Sessions > 0 {
		s.publish(events.Event{Kind: events.SessionsPurged, Text: fmt.Sprintf("%d sessions", rep.Sessions), Actor: a.Name})
	}
	return rep, nil
}
