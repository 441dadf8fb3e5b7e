package matrix

import (
	"context"
	"time"
)

// The task package owns every change of a task; these helpers run the same
// Doc edits under the store's lock, as it does, for the matrix's own tests.

func createVia(s *Store, ctx context.Context, t Task, now time.Time) (Task, error) {
	var out Task
	_, err := s.Modify(ctx, func(d *Doc) error {
		var err error
		out, err = d.CreateTask(t, now)
		return err
	})
	return out, err
}

func updateVia(s *Store, ctx context.Context, id string, u Update, now time.Time) (before, after Task, err error) {
	_, err = s.Modify(ctx, func(d *Doc) error {
		before, _ = d.Task(id)
		after, err = d.UpdateTask(id, u, now)
		return err
	})
	return before, after, err
}

// migrateVia is task.Migrate for the matrix's own tests: it converts the older Item tables of d into one task table, in d; see
// Doc.Migrate. It holds the matrix lock and replaces the file atomically;
// nothing is written when it fails.
func migrateVia(s *Store, ctx context.Context, now time.Time) (Migration, error) {
	// Refuse before locking: the lock file appears with the first write, and
	// a refused migrate must leave the folder as it was.
	d, err := s.Load(ctx)
	if err != nil {
		return Migration{}, err
	}
	if m, err := d.Migrate(now); err != nil || m.AlreadyMigrated {
		return m, err
	}
	var m Migration
	_, err = s.Modify(ctx, func(d *Doc) error {
		var err error
		m, err = d.Migrate(now)
		return err
	})
	return m, err
}
