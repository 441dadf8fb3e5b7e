package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentinfra/agentinfra/agenterr"
)

// ErrStorage is matched (errors.Is) by every failure of the database file
// itself: deleted or replaced under a process that had it open, or not a
// database SQLite can read. Issue 27: a deleted database stranded its runs
// (the supervisor kept writing the deleted file) and a damaged one made
// every command fail with no way forward.
var ErrStorage = agenterr.New(agenterr.Unavailable, "the workspace's database failed")

// ResetHint is the recovery step of a damaged database.
const ResetHint = "move it aside and start a fresh one with `agentinfra session reset-db` (the old file is kept beside it, renamed, for inspection; the sessions and requests in it are not carried over)"

// storageError is an ErrStorage with what happened to which file.
func storageError(reason string, cause error) error {
	err := ErrStorage
	if cause != nil {
		err = errors.Join(ErrStorage, cause)
	}
	return &agenterr.Error{Kind: agenterr.Unavailable, Reason: reason, Err: err}
}

// Check says whether the file at the store's path is still the one it
// opened: an ErrStorage when it was deleted or replaced (by inode: the
// process would otherwise go on reading and writing a file nobody else
// sees).
func (s *Store) Check() error {
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return storageError(fmt.Sprintf("the database %s was deleted while this process had it open", s.path), nil)
	case err != nil:
		return storageError(fmt.Sprintf("the database %s cannot be checked", s.path), err)
	case s.file != nil && !os.SameFile(s.file, fi):
		return storageError(fmt.Sprintf("the database %s was replaced by another file while this process had it open", s.path), nil)
	}
	return nil
}

// LostNote is what a run's record says when the database this store
// opened was deleted or replaced while the run went on ("" when it is
// still the file at its path): the run's record is then written to the
// database now at the path, where every later command reads it.
func (s *Store) LostNote() string {
	if s.Check() == nil {
		return ""
	}
	return "the database was deleted or replaced during the run: the run's record is written to the one now at " + s.path
}

// damaged says whether err is SQLite's "not a database" or "malformed".
func damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_NOTADB || c == sqlite3.SQLITE_CORRUPT
}

// damagedError is the error of a database SQLite cannot read, with the
// recovery step.
func damagedError(path string, err error) error {
	return storageError(fmt.Sprintf("the database %s is damaged and cannot be read: %s", path, ResetHint), err)
}

// Reset moves the database at path aside (with its WAL and shared memory:
// path.broken-STAMP, path.broken-STAMP-wal, ...) and creates a fresh one.
// A database that opens and passes SQLite's quick check is refused unless
// force (Override "force"): resetting throws its sessions away. aside is
// the old file's new name ("" when there was none).
func Reset(ctx context.Context, path string, force bool, now time.Time) (aside string, err error) {
	if _, err := os.Stat(path); err == nil && !force {
		if healthy(ctx, path) == nil {
			return "", &agenterr.Error{Kind: agenterr.Refused, Override: "force",
				Reason: fmt.Sprintf("the database %s opens and passes SQLite's quick check: resetting it would throw its sessions and requests away", path)}
		}
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		from := path + suffix
		if _, err := os.Lstat(from); errors.Is(err, os.ErrNotExist) {
			continue
		}
		to := path + ".broken-" + stamp + suffix
		if err := os.Rename(from, to); err != nil {
			return aside, fmt.Errorf("move %s aside: %w", from, err)
		}
		if suffix == "" {
			aside = to
		}
	}
	fresh, err := Open(ctx, path, Options{})
	if err != nil {
		return aside, fmt.Errorf("create a fresh database %s: %w", path, err)
	}
	return aside, fresh.Close()
}

// healthy opens the database at path (without creating or migrating it)
// and runs SQLite's quick check.
func healthy(ctx context.Context, path string) error {
	s, err := Open(ctx, path, Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	var res string
	if err := s.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("quick check: %s", res)
	}
	return nil
}

// stateDir is the database's folder: its whole diffs and its log of
// storage failures are there.
func (s *Store) stateDir() string { return filepath.Dir(s.path) }
