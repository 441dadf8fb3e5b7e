package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentinfra/agentinfra/internal/stateignore"
	"github.com/agentinfra/agentinfra/workspace"
)

// FileName is the database's name inside the workspace's state folder.
const FileName = "agentinfra.db"

// DefaultMaxSessions is max_concurrent_sessions when the config says nothing.
const DefaultMaxSessions = 3

// busyTimeout is how long a statement waits for another process's write
// lock before it fails with SQLITE_BUSY.
const busyTimeout = 15 * time.Second

// Options tune a Store.
type Options struct {
	// MaxSessions bounds the sessions active or paused at once (0 =
	// DefaultMaxSessions; negative = no bound).
	MaxSessions int
	// Now is the clock (tests pin it); nil = time.Now.
	Now func() time.Time
	// PollInterval is how often Changes looks for other processes' commits
	// (0 = 50 ms).
	PollInterval time.Duration
	// BusyTimeout is how long a statement waits for another process's
	// write lock (0 = 15 s); a write transaction waits up to beginTries of
	// them.
	BusyTimeout time.Duration
}

// Store is an open database. It is safe for concurrent use by goroutines;
// other processes may use the same file at the same time.
type Store struct {
	db   *sql.DB
	path string
	opts Options
	// writeMu lets one goroutine of this process write at a time. SQLite
	// has one writer anyway; without the mutex, goroutines compete through
	// the busy handler's sleeps, which is not fair: a goroutine that
	// writes in a loop can starve another past the busy timeout (a purge
	// beside a live session's decisions). Go's mutex hands over in order
	// once a waiter has waited 1 ms.
	writeMu sync.Mutex
	// file is the database file as it was opened (Check compares the
	// path's file with it).
	file os.FileInfo
}

// StateDir is the workspace folder that holds the database.
func StateDir(ws *workspace.Workspace) string { return filepath.Join(ws.AgentDir(), "state") }

// PathIn is the database file of a workspace.
func PathIn(ws *workspace.Workspace) string { return filepath.Join(StateDir(ws), FileName) }

// OpenWorkspace opens (creating on demand) the workspace's database.
func OpenWorkspace(ctx context.Context, ws *workspace.Workspace, opts Options) (*Store, error) {
	if _, err := WriteIgnore(ws.AgentDir()); err != nil {
		return nil, fmt.Errorf("prepare %s: %w", StateDir(ws), err)
	}
	return Open(ctx, PathIn(ws), opts)
}

// WriteIgnore makes git ignore agentDir/state (the database and its WAL)
// with a .gitignore of its own, so no repository file needs editing.
// Idempotent; created says whether it wrote the file.
func WriteIgnore(agentDir string) (created bool, err error) { return stateignore.State(agentDir) }

// Open opens the database at path, creating it and migrating its schema to
// the current version when needed.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("create the folder of the database %s: %w", abs, err)
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = busyTimeout
	}
	create, err := sql.Open("sqlite", dsn(abs, opts.BusyTimeout, "rwc"))
	if err != nil {
		return nil, fmt.Errorf("open the database %s: %w", abs, err)
	}
	defer create.Close()
	s := &Store{db: create, path: abs, opts: opts}
	if err := s.prepare(ctx); err != nil {
		if damaged(err) {
			return nil, damagedError(abs, err)
		}
		return nil, err
	}
	s.file, _ = os.Stat(abs)
	// From here on no connection of the store creates the file: the pool
	// opens connections as it needs them, and one opened after the
	// database was deleted made a new, empty file at the path — what
	// others then read, and what Check took for a replacement by someone
	// else. Opened before the creating pool closes, so the database never
	// loses its last connection (SQLite would checkpoint and drop the WAL).
	db, err := sql.Open("sqlite", dsn(abs, opts.BusyTimeout, "rw"))
	if err != nil {
		return nil, fmt.Errorf("open the database %s: %w", abs, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the database %s: %w", abs, err)
	}
	// A CLI process needs few connections; a bridge holds one for Changes.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	s.db = db
	return s, nil
}

// dsn is the driver's name for the file, opened as mode says (SQLite's
// URI mode: "rwc" creates a missing file, "rw" fails instead): a busy
// timeout (writers from other processes wait their turn), foreign keys, synchronous FULL (a
// decision that was acknowledged survives a power cut too), and BEGIN
// IMMEDIATE for write transactions (a transaction that will write takes the
// lock first, so it never fails with SQLITE_BUSY half-way when upgrading
// from a read). Each of these is a setting of the connection only; WAL
// mode is a setting of the file, made once by prepare: as a per-connection
// PRAGMA it ran on every new connection and failed with SQLITE_BUSY,
// without waiting, while another process was creating the file.
func dsn(path string, busy time.Duration, mode string) string {
	q := url.Values{}
	q.Set("mode", mode)
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// prepare puts the file in WAL mode (readers never wait for the writer; the
// mode is kept in the file) and migrates its schema. SQLite returns
// SQLITE_BUSY at once, without its busy handler, to a connection that
// switches the journal mode or starts reading while another process holds
// the file exclusively for a moment: switching it to WAL, recovering its
// WAL, or removing the WAL as its last connection closes. Processes that
// open a new database together (the first agents of a fleet) hit exactly
// that, so the whole step is tried again, with growing pauses, for up to one
// busy timeout; nothing has changed when it fails busy (the migration is
// one transaction).
func (s *Store) prepare(ctx context.Context) error {
	deadline := time.Now().Add(s.opts.BusyTimeout)
	pause := time.Millisecond
	for {
		err := s.walMode(ctx)
		if err == nil {
			err = s.migrate(ctx)
		}
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause + rand.N(pause)):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func (s *Store) walMode(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		return fmt.Errorf("put %s in WAL mode: %w", s.path, err)
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) now() time.Time { return s.opts.Now() }

// tx runs fn in a write transaction (BEGIN IMMEDIATE) and commits it when fn
// returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("begin a transaction on %s: %w", s.path, err)
	}
	if err := fn(t); err != nil {
		t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit to %s: %w", s.path, err)
	}
	return nil
}

// beginTries is how many busy timeouts a write transaction waits for the
// write lock before it gives up.
const beginTries = 4

// begin starts a write transaction. SQLite's busy handler polls with
// sleeps, which is not fair between processes: under a burst of writers
// (a purge, many deciders, a loaded machine) one can miss the lock for a
// whole busy timeout while others take turns. Nothing has happened when
// BEGIN IMMEDIATE fails busy, so it is tried again, up to beginTries busy
// timeouts in all, before "database is locked" reaches the person.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	for try := 1; ; try++ {
		t, err := s.db.BeginTx(ctx, nil)
		if err == nil || try == beginTries || !isBusy(err) || ctx.Err() != nil {
			return t, err
		}
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// ms is t in Unix milliseconds (how the database keeps times).
func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

var errNoRows = sql.ErrNoRows

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }
