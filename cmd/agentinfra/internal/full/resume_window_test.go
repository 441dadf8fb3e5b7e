//go:build linux

package full

// Issue 33: a supervised dispatch SIGKILLed in the instant between its
// run's end and its session's end. The kill is placed there by holding what
// the run's end waits for: the matrix's lock (the task is not moved yet)
// and the database's write lock (the session cannot be ended yet). The
// next command finds the supervisor dead and ends the session as the run
// ended — terminated, the task in REVIEW once — not interrupted with a
// resume that would say the task moved on.

import (
	"context"
	"database/sql"
	"strings"
	"syscall"
	"testing"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestASupervisorKilledBetweenItsRunsEndAndItsSessionsEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		// moved: killed after the run moved its task (else before).
		moved bool
	}{{"before-the-task-moved", false}, {"after-the-task-moved", true}} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := counterClaude(t)
			d := startCounterDispatch(t, base)
			dir, env, st, ses, cmd, exited, out := d.dir, d.env, d.st, d.ses, d.cmd, d.exited, d.out
			ws, _ := workspace.New(dir)
			ctx := context.Background()
			// The task is claimed by now; the run's end waits here to move it.
			mlock := flock.New(matrix.NewStore(ws.MatrixPath()).LockPath())
			if err := mlock.Lock(); err != nil {
				t.Fatal(err)
			}
			defer mlock.Unlock()
			approvals := approveAll(t, dir, env, st)
			defer approvals.stop()
			poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
				row, err := st.Run(ctx, ses.RunID)
				if err != nil {
					return false
				}
				rec, err := agentrun.RecordOf(row)
				return err == nil && rec.Concluded()
			}, "the run did not end:\n%s", out)
			given := approvals.stop()
			if tc.moved {
				// The session's end waits for the database; the task moves.
				db, err := sql.Open("sqlite", "file:"+st.Path())
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				conn, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
					t.Fatal(err)
				}
				mlock.Unlock()
				poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
					return strings.Contains(matrixOf(t, dir), "| a1b2c3 | REVIEW |")
				}, "the run did not move its task:\n%s", out)
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
			} else {
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				mlock.Unlock()
				if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | IN_PROGRESS |") {
					t.Fatalf("the task moved before the kill:\n%s", m)
				}
			}
			if now, _ := st.Session(ctx, ses.ID); now.Status != store.SessionActive {
				t.Fatalf("after the kill the session is %s (%s), want active: the kill missed the window", now.Status, now.EndReason)
			}

			killed := matrixOf(t, dir)
			// The next command finds the supervisor dead.
			_, stderr, err := runIn(t, dir, env, "session", "list")
			if err != nil {
				t.Fatalf("session list: %v\n%s", err, stderr)
			}
			want := "session " + itoa(ses.ID) + " is terminated: success: completed (its supervisor, pid "
			if !strings.Contains(stderr, want) {
				t.Errorf("session list said\n%s\nwant it to say %q", stderr, want)
			}
			if !strings.Contains(stderr, "task a1b2c3 is REVIEW") {
				t.Errorf("session list said\n%s\nwant it to say where the task is", stderr)
			}
			if strings.Contains(stderr, "warning") {
				t.Errorf("session list warned:\n%s", stderr)
			}
			now, _ := st.Session(ctx, ses.ID)
			if now.Status != store.SessionTerminated || !strings.HasPrefix(now.EndReason, "success: completed") {
				t.Errorf("the session is %s: %s, want terminated as the run ended", now.Status, now.EndReason)
			}
			if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | REVIEW |") {
				t.Errorf("the task is not in REVIEW:\n%s", m)
			}
			if m := matrixOf(t, dir); tc.moved && m != killed {
				t.Errorf("the reap changed the matrix the run had moved its task in:\n%s\nwas\n%s", m, killed)
			}
			row, err := st.Run(ctx, ses.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if rec, _ := agentrun.RecordOf(row); rec.Status != agentrun.StatusCompleted || rec.StatusAfter != "REVIEW" {
				t.Errorf("the run's record says %s, task %q; want completed, REVIEW", rec.Status, rec.StatusAfter)
			}
			// Nothing is left to resume, and resume says why.
			stdout, stderr, err := runIn(t, dir, env, "session", "resume", itoa(ses.ID))
			if err == nil || !strings.Contains(stderr, "terminated") {
				t.Errorf("session resume of the ended run: %v\n%s%s", err, stdout, stderr)
			}
			checkCounted(t, dir, env, st, ses.ID, given)
		})
	}
}
