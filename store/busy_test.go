package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// A writer that finds the write lock held past one busy timeout (another
// process in a long transaction, a burst of writers) tries again instead of
// failing with "database is locked"; past all its tries it does fail.
func TestWriteWaitsPastOneBusyTimeout(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	const busy = 200 * time.Millisecond
	s, err := Open(ctx, path, Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	hold := func(d time.Duration) {
		t.Helper()
		held, err := other.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(d, func() { held.Rollback() })
	}
	write := func() error {
		return s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS busy_probe (x INTEGER)`)
			return err
		})
	}

	hold(3 * busy / 2) // longer than one busy timeout, shorter than beginTries of them
	if err := write(); err != nil {
		t.Fatalf("a write behind a lock held 1.5 busy timeouts failed: %v", err)
	}

	hold(time.Hour)
	err = write()
	if err == nil || !isBusy(err) {
		t.Fatalf("a write behind a lock that is never released: %v; want database is locked", err)
	}
}
