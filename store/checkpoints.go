package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Checkpoint is the record of one snapshot of a session's worktree: the git
// commit under a private ref that holds the whole tree, and the hash of
// every file (Files, JSON written by package checkpoint).
type Checkpoint struct {
	ID        int64     `json:"id"`
	SessionID int64     `json:"session_id"`
	Label     string    `json:"label,omitempty"`
	Dir       string    `json:"dir"`
	Ref       string    `json:"ref"`
	Commit    string    `json:"commit"`
	Files     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
}

const checkpointCols = `id, session_id, label, dir, git_ref, commit_sha, files, created_at, created_by`

func scanCheckpoint(sc scanner) (Checkpoint, error) {
	var c Checkpoint
	var created int64
	err := sc.Scan(&c.ID, &c.SessionID, &c.Label, &c.Dir, &c.Ref, &c.Commit, &c.Files, &created, &c.CreatedBy)
	c.CreatedAt = fromMS(created)
	return c, err
}

// AddCheckpoint records a checkpoint whose git objects and ref exist.
func (s *Store) AddCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	var out Checkpoint
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := sessionTx(ctx, tx, c.SessionID); err != nil {
			return err
		}
		now := ms(s.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (session_id, label, git_ref, files, created_at, dir, commit_sha, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.SessionID, c.Label, c.Ref, c.Files, now, c.Dir, c.Commit, c.CreatedBy)
		if err != nil {
			return fmt.Errorf("record a checkpoint: %w", err)
		}
		id, _ := res.LastInsertId()
		actor := c.CreatedBy
		if actor == "" {
			actor = ActorAgentinfra
		}
		if err := audit(ctx, tx, now, c.SessionID, 0, actor, SurfaceSupervisor, "checkpoint_created", map[string]any{"checkpoint": id, "label": c.Label, "commit": c.Commit}); err != nil {
			return err
		}
		out, err = scanCheckpoint(tx.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE id = ?`, id))
		return err
	})
	return out, err
}

// CheckpointByID reads one checkpoint.
func (s *Store) CheckpointByID(ctx context.Context, id int64) (Checkpoint, error) {
	c, err := scanCheckpoint(s.db.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE id = ?`, id))
	if isNoRows(err) {
		return Checkpoint{}, notFoundItem("checkpoint", fmt.Sprint(id), "`agentinfra checkpoint list` lists the checkpoints")
	}
	return c, err
}

// Checkpoints lists a session's checkpoints (0 = every session's), oldest
// first.
func (s *Store) Checkpoints(ctx context.Context, sessionID int64) ([]Checkpoint, error) {
	q := `SELECT ` + checkpointCols + ` FROM checkpoints`
	var args []any
	if sessionID != 0 {
		q += ` WHERE session_id = ?`
		args = append(args, sessionID)
	}
	return queryAll(ctx, s.db, scanCheckpoint, q+` ORDER BY id`, args...)
}

// RecordRestore appends a restore to the audit log.
func (s *Store) RecordRestore(ctx context.Context, c Checkpoint, by, surface string, diverged []string) error {
	return s.Record(ctx, Event{SessionID: c.SessionID, Actor: by, Surface: surface, Action: "checkpoint_restored",
		Detail: mustJSON(map[string]any{"checkpoint": c.ID, "commit": c.Commit, "diverged": diverged})})
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
