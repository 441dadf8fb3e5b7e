package store

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"
)

// fillOld writes n sessions that ended at `ended`, each with two requests,
// an alert, a prompt, a steering message, a checkpoint and three audit
// rows (as years of use would leave them), set-wise in one transaction: a
// row at a time would take most of the test's time on a slow disk.
func fillOld(t testing.TB, s *Store, n int, ended time.Time) {
	t.Helper()
	ctx := context.Background()
	e := ms(ended)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var first int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM sessions`).Scan(&first); err != nil {
			return err
		}
		const seq = `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?) `
		stmts := []struct {
			q    string
			args []any
		}{
			{seq + `INSERT INTO sessions (id, owner, workspace, status, mode, cli, created_at, updated_at, ended_at, end_reason)
				SELECT ? + i, 'ana', '/w', 'terminated', 'local', 'claude', ?, ?, ?, 'done' FROM k`, []any{n, first, e - 1000, e, e}},
			{seq + `INSERT INTO approvals (session_id, kind, tool, command, title, risk, status, created_at, decided_at, decided_by, surface)
				SELECT ? + i / 2, 'command', 'Bash', 'go test ./...', 'Run go test', 'low', 'approved', ?, ?, 'ana', 'terminal' FROM k`, []any{2 * n, first, e - 900, e - 800}},
			{seq + `INSERT INTO alerts (session_id, status, nudges, raised_at, updated_at) SELECT ? + i, 'self_recovered', 1, ?, ? FROM k`, []any{n, first, e - 500, e - 400}},
			{seq + `INSERT INTO prompts (session_id, kind, status, created_at) SELECT ? + i, 'continuation', 'continued', ? FROM k`, []any{n, first, e - 500}},
			{seq + `INSERT INTO steering (session_id, text, sent_by, surface, status, created_at) SELECT ? + i, 'go on', 'ana', 'terminal', 'delivered', ? FROM k`, []any{n, first, e - 500}},
			{seq + `INSERT INTO checkpoints (session_id, label, git_ref, created_at) SELECT ? + i, 'before', 'refs/agentinfra/checkpoints/x', ? FROM k`, []any{n, first, e - 500}},
			{seq + `INSERT INTO audit (at, session_id, actor, surface, action, detail) SELECT ?, ? + i / 3, 'ana', 'terminal', 'request_approved', '' FROM k`, []any{3 * n, e - 100, first}},
		}
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func count(t testing.TB, s *Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Purge of 10,000 sessions ended 40 days ago, with their requests, alerts,
// prompts, steering, checkpoints and audit rows: every one goes, in short
// transactions, while live sessions and recent ones stay whole and another
// writer keeps deciding requests. The time taken and the longest lock held
// are figures (t.Log), not assertions.
func TestPurgeTenThousandOldSessions(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := newStore(t, Options{MaxSessions: -1})
	const old = 10_000
	fillStart := time.Now()
	fillOld(t, s, old, now.AddDate(0, 0, -40))
	t.Logf("filled %d old sessions in %v", old, time.Since(fillStart).Round(time.Millisecond))

	// A recently ended session (within retention) and live ones.
	recent := activeSession(t, s, "ana")
	s.RaiseAlert(ctx, recent.ID, "silent")
	s.SetSessionStatus(ctx, recent.ID, Transition{To: SessionTerminated, By: "ana", Reason: "done"})
	var live []Session
	for range 5 {
		ses := activeSession(t, s, "bo")
		raise(t, s, ses.ID, time.Hour)
		s.RaiseAlert(ctx, ses.ID, "silent")
		live = append(live, ses)
	}
	liveAudit := count(t, s, `SELECT COUNT(*) FROM audit WHERE session_id > ?`, old)

	dry, err := s.Purge(ctx, PurgeOptions{Before: now.AddDate(0, 0, -30), DryRun: true})
	if err != nil || dry.Sessions != old || dry.Requests != 2*old || dry.Alerts != old || dry.Audit != 3*old {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM sessions`); n != old+6 {
		t.Fatalf("the dry run deleted something: %d sessions", n)
	}

	// Another writer decides requests of a live session meanwhile.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var worst time.Duration
	var writes int
	wg.Add(1)
	go func() {
		defer wg.Done()
		ses := activeSession(t, s, "cy")
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := raise(t, s, ses.ID, time.Hour)
			start := time.Now()
			if _, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: true, By: "cy", Surface: SurfaceTerminal}); err != nil {
				t.Error(err)
				return
			}
			worst = max(worst, time.Since(start))
			writes++
		}
	}()
	var refs int
	start := time.Now()
	rep, err := s.Purge(ctx, PurgeOptions{Before: now.AddDate(0, 0, -30), By: "ana",
		BeforeDelete: func(_ context.Context, cps []Checkpoint) error { refs += len(cps); return nil }})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("purged %d sessions (%d requests, %d alerts, %d audit rows) in %v: %d batches, longest lock %v; "+
		"a concurrent writer decided %d requests, its slowest decision took %v",
		rep.Sessions, rep.Requests, rep.Alerts, rep.Audit, took.Round(time.Millisecond), rep.Batches, rep.LongestBatch.Round(time.Microsecond),
		writes, worst.Round(time.Microsecond))
	want := PurgeReport{Sessions: old, Requests: 2 * old, Alerts: old, Prompts: old, Steering: old, Checkpoints: old, Audit: 3 * old}
	if rep.Sessions != want.Sessions || rep.Requests != want.Requests || rep.Alerts != want.Alerts || rep.Prompts != want.Prompts ||
		rep.Steering != want.Steering || rep.Checkpoints != want.Checkpoints || rep.Audit != want.Audit || refs != old {
		t.Fatalf("report %+v (refs %d), want %+v", rep, refs, want)
	}
	if rep.Batches != old/DefaultPurgeBatch {
		t.Errorf("%d batches, want %d", rep.Batches, old/DefaultPurgeBatch)
	}
	for _, tb := range []string{"approvals", "alerts", "prompts", "steering", "checkpoints", "audit"} {
		if n := count(t, s, `SELECT COUNT(*) FROM `+tb+` WHERE session_id <= ?`, old); n != 0 {
			t.Errorf("%d rows of purged sessions left in %s", n, tb)
		}
	}
	// Nothing live or recent was touched.
	for _, ses := range append(live, recent) {
		got, err := s.Session(ctx, ses.ID)
		if err != nil {
			t.Fatalf("session %d is gone: %v", ses.ID, err)
		}
		if a, _ := s.Alerts(ctx, ses.ID); len(a) != 1 {
			t.Errorf("session %d (%s) lost its alert", ses.ID, got.Status)
		}
	}
	for _, ses := range live {
		if p, _ := s.Requests(ctx, ses.ID); len(p) != 1 || p[0].Status != StatusPending {
			t.Errorf("live session %d's request: %+v", ses.ID, p)
		}
	}
	if n := count(t, s, `SELECT COUNT(*) FROM audit WHERE session_id > ? AND session_id <= ?`, old, old+6); n != liveAudit {
		t.Errorf("audit rows of the sessions kept: %d, want %d", n, liveAudit)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM audit WHERE action = 'sessions_purged'`); n != 1 {
		t.Errorf("%d summary rows", n)
	}
}
