package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// A process that has the database open notices when the file at its path
// is another one (replaced) or none (deleted).
func TestCheckNoticesADeletedOrReplacedDatabase(t *testing.T) {
	s := newStore(t, Options{})
	if err := s.Check(); err != nil {
		t.Fatalf("a database in place: %v", err)
	}
	other := filepath.Join(filepath.Dir(s.Path()), "other.db")
	o, err := Open(context.Background(), other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if err := os.Rename(other, s.Path()); err != nil {
		t.Fatal(err)
	}
	err = s.Check()
	if !errors.Is(err, ErrStorage) || agenterr.KindOf(err) != agenterr.Unavailable || !strings.Contains(err.Error(), "was replaced") {
		t.Fatalf("a replaced database: %v", err)
	}
	os.Remove(s.Path())
	if err := s.Check(); !errors.Is(err, ErrStorage) || !strings.Contains(err.Error(), "was deleted") {
		t.Fatalf("a deleted database: %v", err)
	}
}

// A file SQLite cannot read is refused with the recovery step; the reset
// moves it aside (kept, renamed) and a fresh one opens; a healthy database
// is reset only by force.
func TestADamagedDatabaseSaysHowToRecover(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", FileName)
	os.MkdirAll(filepath.Dir(path), 0o700)
	junk := []byte(strings.Repeat("not a database, not at all. ", 200))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, path, Options{})
	if !errors.Is(err, ErrStorage) || agenterr.KindOf(err) != agenterr.Unavailable ||
		!strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "agentinfra session reset-db") {
		t.Fatalf("opening a damaged database: %v", err)
	}
	now := time.Date(2026, 11, 28, 15, 4, 5, 0, time.UTC)
	aside, err := Reset(ctx, path, false, now)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(aside); string(b) != string(junk) || filepath.Base(aside) != FileName+".broken-20261128T150405Z" {
		t.Fatalf("the damaged file was not kept aside as it was: %s", aside)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("the fresh database: %v", err)
	}
	activeSession(t, s, "ana")
	s.Close()
	if _, err := Reset(ctx, path, false, now.Add(time.Hour)); agenterr.KindOf(err) != agenterr.Refused {
		t.Fatalf("a healthy database was reset without force: %v", err)
	}
	if aside, err := Reset(ctx, path, true, now.Add(time.Hour)); err != nil || aside == "" {
		t.Fatalf("reset with force: %q %v", aside, err)
	}
}

// A request that was pending in a database lost under its run is not only
// "not found": it says what happened to it.
func TestALostRequestSaysWhatHappened(t *testing.T) {
	s := newStore(t, Options{})
	if err := s.NoteFailure(Failure{What: "deleted", Text: "the database was deleted; its run was ended: session 3, task a1 moved to BLOCKED", SessionID: 3, Requests: []int64{62}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Request(context.Background(), 62)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "pending in a database that is gone") || !strings.Contains(err.Error(), "task a1 moved to BLOCKED") {
		t.Fatalf("a lost request: %v", err)
	}
	if _, err := s.Request(context.Background(), 63); !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "gone") {
		t.Fatalf("an unknown request: %v", err)
	}
	fs, err := Failures(filepath.Dir(s.Path()))
	if err != nil || len(fs) != 1 || fs[0].At.IsZero() {
		t.Fatalf("the log: %+v %v", fs, err)
	}
}

// A database deleted under a process that has it open is not made again
// by that process: a connection its pool opens afterwards (as it does
// under load) fails instead of creating an empty file at the path, which
// every other command would then read, and which Check took for a
// replacement by someone else (a CI run said "replaced" of a deleted
// database).
func TestAStoreNeverRecreatesItsDeletedDatabase(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	s.db.SetMaxIdleConns(0) // each query opens a connection of its own
	if _, err := s.Sessions(ctx, SessionFilter{}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(s.Path() + suffix)
	}
	if _, err := s.Sessions(ctx, SessionFilter{}); err == nil {
		t.Error("a query after the database was deleted succeeded")
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted database is at its path again (%v): the store made a new one", err)
	}
	if err := s.Check(); !errors.Is(err, ErrStorage) || !strings.Contains(err.Error(), "was deleted") {
		t.Fatalf("Check after the deletion: %v", err)
	}
	// Another process (a person's next command) still makes a fresh one.
	o, err := Open(ctx, s.Path(), Options{})
	if err != nil {
		t.Fatalf("a new open after the deletion: %v", err)
	}
	o.Close()
}
