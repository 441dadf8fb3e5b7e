package store

import (
	"context"
	"fmt"
)

// Supervisor is the process that runs a session's agent CLI: its pid and
// its start time as the kernel reports it ("" where it cannot be told), so
// that a reused pid is not taken for it.
type Supervisor struct {
	PID   int
	Start string
}

// SetSupervisor records the process that runs session id now (the fleet's
// run moves from the process that started it to its detached supervisor).
func (s *Store) SetSupervisor(ctx context.Context, id int64, p Supervisor) error {
	now := ms(s.now())
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET supervisor_pid = ?, supervisor_start = ?, heartbeat_at = ?, updated_at = ? WHERE id = ?`,
		p.PID, p.Start, now, now, id)
	if err != nil {
		return fmt.Errorf("record the supervisor of session %d: %w", id, err)
	}
	return nil
}

// LiveSupervisors lists the sessions that hold a place or are about to
// (created, active, paused) with the process that runs each.
func (s *Store) LiveSupervisors(ctx context.Context) (map[int64]Supervisor, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, supervisor_pid, supervisor_start FROM sessions WHERE status IN ('created','active','paused')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]Supervisor{}
	for rows.Next() {
		var id int64
		var p Supervisor
		if err := rows.Scan(&id, &p.PID, &p.Start); err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, rows.Err()
}

// AttachRun records the run a session is (dispatch knows its run ID only
// once it claimed the task, after the session took its place).
func (s *Store) AttachRun(ctx context.Context, id int64, runID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET run_id = ?, updated_at = ? WHERE id = ?`, runID, ms(s.now()), id)
	return err
}
