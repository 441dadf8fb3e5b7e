package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every table and column the current schema has, read back from SQLite.
func schemaOf(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, tb := range tables {
		cols, err := s.db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, tb)
		if err != nil {
			t.Fatal(err)
		}
		for cols.Next() {
			var c string
			cols.Scan(&c)
			out[tb] = append(out[tb], c)
		}
		cols.Close()
	}
	return out
}

func TestMigrateFromEmptyFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil { // an empty file, as touch leaves it
		t.Fatal(err)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := userVersion(ctx, s.db); v != SchemaVersion() {
		t.Fatalf("version %d, want %d", v, SchemaVersion())
	}
	for _, tb := range []string{"sessions", "approvals", "audit", "steering", "alerts", "prompts", "checkpoints", "runs", "imports"} {
		if len(schemaOf(t, s)[tb]) == 0 {
			t.Errorf("table %s missing", tb)
		}
	}
	var mode string
	s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal mode %q, want wal", mode)
	}
}

// A file written at schema version 1 migrates forward keeping every row,
// and ends with the same schema as a new file.
func TestMigrateFromV1Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("testdata/v1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, src, 0o600)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("the v1 file does not open: %v", err)
	}
	defer s.Close()
	if v, _ := userVersion(ctx, s.db); v != SchemaVersion() {
		t.Fatalf("version %d after migration, want %d", v, SchemaVersion())
	}
	fresh := newStore(t, Options{})
	if got, want := schemaOf(t, s), schemaOf(t, fresh); !sameSchema(got, want) {
		t.Errorf("migrated schema differs from a new file's:\n got %v\nwant %v", got, want)
	}

	ses, err := s.Session(ctx, 1)
	if err != nil || ses.Owner != "ana" || ses.Agent != "papi" || ses.TaskID != "a1b2c3" || ses.Status != SessionActive {
		t.Fatalf("session 1 after migration: %+v %v", ses, err)
	}
	pend, err := s.Pending(ctx)
	if err != nil || len(pend) != 1 || pend[0].File != "fetch/fetch.go" || pend[0].Diff == "" {
		t.Fatalf("pending after migration: %+v %v", pend, err)
	}
	r3, _ := s.Request(ctx, 3)
	if r3.Status != StatusRejected || r3.Reason != "no network" || r3.DecidedBy != "bo" {
		t.Fatalf("request 3 after migration: %+v", r3)
	}
	// The migrated file works: the pending request is decided, IDs go on.
	if _, err := s.Decide(ctx, Decision{RequestID: pend[0].ID, Approve: true, By: "ana", Surface: SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	r := raise(t, s, 1, time.Minute)
	if r.ID != 4 {
		t.Errorf("a new request after migration got ID %d, want 4", r.ID)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO steering (session_id, text, sent_by, surface, created_at) VALUES (1, 'also run vet', 'ana', 'terminal', 0)`); err != nil {
		t.Errorf("a v2 table is not usable after migration: %v", err)
	}
}

func sameSchema(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

// Processes that open a new file at once migrate it once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			s, err := Open(ctx, path, Options{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A file written at schema version 2 (testdata/v2.db) migrates to the
// current schema keeping its rows; the runs table and the supervisor's
// start time come in empty.
func TestMigrateFromV2Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("testdata/v2.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, src, 0o600)
	if v := fileVersion(t, path); v != 2 {
		t.Fatalf("the fixture has schema version %d, want 2", v)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("the v2 file does not open: %v", err)
	}
	defer s.Close()
	if got, want := schemaOf(t, s), schemaOf(t, newStore(t, Options{})); !sameSchema(got, want) {
		t.Errorf("migrated schema differs from a new file's:\n got %v\nwant %v", got, want)
	}
	ses, err := s.Session(ctx, 1)
	if err != nil || ses.Owner != "ana" || ses.RunID != "papi-3" || ses.Status != SessionActive {
		t.Fatalf("session 1 after migration: %+v %v", ses, err)
	}
	sups, err := s.LiveSupervisors(ctx)
	if err != nil || sups[1].PID != 4242 || sups[1].Start != "" {
		t.Fatalf("supervisor of session 1 after migration: %+v %v", sups, err)
	}
	pend, err := s.Pending(ctx)
	if err != nil || len(pend) != 1 || pend[0].Command != "curl https://example.com" {
		t.Fatalf("pending after migration: %+v %v", pend, err)
	}
	var steering int
	s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM steering`).Scan(&steering)
	if steering != 1 {
		t.Errorf("steering rows after migration: %d", steering)
	}
	if runs, err := s.Runs(ctx, RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("runs after migration: %v %v", runs, err)
	}
	if err := s.SaveRun(ctx, RunRow{RunID: "papi-3", Caller: CallerFleet, Agent: "papi", Record: []byte(`{"run_id":"papi-3"}`)}); err != nil {
		t.Fatalf("the runs table is not usable after migration: %v", err)
	}
}

// fileVersion reads a database file's schema version without migrating it.
func fileVersion(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 64 {
		t.Fatalf("read %s: %v", path, err)
	}
	// The SQLite header keeps user_version at offset 60, big-endian.
	return int(b[60])<<24 | int(b[61])<<16 | int(b[62])<<8 | int(b[63])
}

// A file written at schema version 3 (testdata/v3.db) migrates to v4
// keeping its rows: its active alert and pending prompt stay the session's
// (one of each, still enforced), the new columns take their defaults, and
// the audit log stays append-only for a session that exists.
func TestMigrateFromV3Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("testdata/v3.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, src, 0o600)
	if v := fileVersion(t, path); v != 3 {
		t.Fatalf("the fixture has schema version %d, want 3", v)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("the v3 file does not open: %v", err)
	}
	defer s.Close()
	if got, want := schemaOf(t, s), schemaOf(t, newStore(t, Options{})); !sameSchema(got, want) {
		t.Errorf("migrated schema differs from a new file's:\n got %v\nwant %v", got, want)
	}
	if paused, err := s.WatchdogPaused(ctx, 1); err != nil || paused {
		t.Fatalf("watchdog of session 1 after migration: %v %v", paused, err)
	}
	a, ok, err := s.ActiveAlert(ctx, 1)
	if err != nil || !ok || a.Status != AlertPending {
		t.Fatalf("alert after migration: %+v %v %v", a, ok, err)
	}
	if _, err := s.RaiseAlert(ctx, 1, "again"); !errors.Is(err, ErrPendingExists) {
		t.Fatalf("a second active alert after migration: %v", err)
	}
	p, ok, err := s.PendingPrompt(ctx, 1)
	if err != nil || !ok || p.Text != "Which DB?" || p.Reason != "" {
		t.Fatalf("prompt after migration: %+v %v %v", p, ok, err)
	}
	cps, err := s.Checkpoints(ctx, 1)
	if err != nil || len(cps) != 1 || cps[0].Label != "before" || cps[0].Commit != "" || cps[0].Dir != "" {
		t.Fatalf("checkpoints after migration: %+v %v", cps, err)
	}
	if runs, err := s.Runs(ctx, RunFilter{}); err != nil || len(runs) != 1 || runs[0].RunID != "papi-7" {
		t.Fatalf("runs after migration: %+v %v", runs, err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE session_id = 1`); err == nil {
		t.Fatal("a live session's audit rows were deleted after migration")
	}
}
