package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests below re-execute the test binary as other processes (real OS
// processes, each with its own connections and locks) through helperMain.
const helperEnv = "AGENTINFRA_STORE_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(helperMain(role))
	}
	os.Exit(m.Run())
}

// helperMain: "decide DB ID BY SURFACE": print "ready", wait for a line on
// stdin, decide, print the outcome as JSON. "write DB": create sessions,
// raise and decide requests forever, printing the ID of each request once
// its decision is committed. "watch DB": print the Unix-nanosecond time each
// change is seen. "raise DB SESSION": on each stdin line raise a request,
// print its ID.
func helperMain(role string) int {
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("STORE_DB"), Options{PollInterval: pollFromEnv()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	in := bufio.NewScanner(os.Stdin)
	switch role {
	case "decide":
		id, _ := strconv.ParseInt(os.Getenv("STORE_ID"), 10, 64)
		fmt.Fprintln(out, "ready")
		out.Flush()
		in.Scan()
		r, err := s.Decide(ctx, Decision{RequestID: id, Approve: os.Getenv("STORE_APPROVE") == "1", By: os.Getenv("STORE_BY"), Surface: os.Getenv("STORE_SURFACE")})
		res := map[string]any{"won": err == nil, "status": r.Status}
		if err != nil {
			res["error"] = err.Error()
			var de *DecidedError
			res["already_decided"] = errors.As(err, &de)
		}
		json.NewEncoder(out).Encode(res)
	case "write":
		for i := 0; ; i++ {
			ses, err := s.CreateSession(ctx, NewSession{Owner: "ana", Workspace: "/w"})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionActive, By: "ana"})
			r, err := s.RaiseRequest(ctx, NewRequest{SessionID: ses.ID, Kind: KindEdit, Tool: "Edit", File: "a.go", Diff: string(make([]byte, 2000)), Title: "edit"})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if _, err := s.Decide(ctx, Decision{RequestID: r.ID, Approve: i%2 == 0, By: "ana", Surface: SurfaceTerminal}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			s.SetSessionStatus(ctx, ses.ID, Transition{To: SessionTerminated, By: "ana"})
			fmt.Fprintln(out, r.ID)
			out.Flush()
		}
	case "watch":
		changes, err := s.Changes(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, "ready")
		out.Flush()
		for range changes {
			fmt.Fprintln(out, time.Now().UnixNano())
			out.Flush()
		}
	case "wait": // for each request ID on stdin: say "waiting", wait, print when it was seen decided
		for in.Scan() {
			id, _ := strconv.ParseInt(in.Text(), 10, 64)
			wctx, cancel := context.WithCancel(ctx)
			changes, err := s.Changes(wctx) // the baseline, before "waiting"
			if err != nil {
				cancel()
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Fprintln(out, "waiting")
			out.Flush()
			for {
				r, err := s.Request(ctx, id)
				if err != nil || r.Status != StatusPending {
					break
				}
				<-changes
			}
			cancel()
			fmt.Fprintln(out, time.Now().UnixNano())
			out.Flush()
		}
	}
	return 0
}

func pollFromEnv() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("STORE_POLL"))
	return d
}

// helperProc is a running helper process.
type helperProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// helper starts the test binary as a helper process.
func helper(t testing.TB, role, db string, env ...string) helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role, "STORE_DB="+db), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return helperProc{cmd, stdin, bufio.NewScanner(stdout)}
}

// Twenty processes answer the same request at once: exactly one wins, the
// nineteen others are told it was already decided, by whom and where.
func TestTwentyProcessesAnswerOneRequest(t *testing.T) {
	s := newStore(t, Options{})
	ses := activeSession(t, s, "ana")
	r := raise(t, s, ses.ID, time.Hour)
	const n = 20
	surfaces := []string{SurfaceTerminal, SurfaceWeb, SurfaceSlack}
	var procs []helperProc
	for i := range n {
		by := "ana"
		if i%2 == 1 {
			by = "ops"
		}
		procs = append(procs, helper(t, "decide", s.Path(), "STORE_ID="+itoa(r.ID), "STORE_BY="+by,
			"STORE_SURFACE="+surfaces[i%3], fmt.Sprintf("STORE_APPROVE=%d", i%2)))
	}
	for _, p := range procs { // every process has its connection open
		if !p.out.Scan() || p.out.Text() != "ready" {
			t.Fatalf("a helper did not get ready: %q", p.out.Text())
		}
	}
	for _, p := range procs { // go
		p.in.Write([]byte("go\n"))
	}
	winners, already := 0, 0
	for _, p := range procs {
		if !p.out.Scan() {
			t.Fatal("a helper printed no outcome")
		}
		var res struct {
			Won            bool   `json:"won"`
			AlreadyDecided bool   `json:"already_decided"`
			Error          string `json:"error"`
		}
		json.Unmarshal(p.out.Bytes(), &res)
		switch {
		case res.Won:
			winners++
		case res.AlreadyDecided:
			already++
		default:
			t.Errorf("a helper failed otherwise: %s", p.out.Text())
		}
	}
	if winners != 1 || already != n-1 {
		t.Fatalf("winners %d, already decided %d; want 1 and %d", winners, already, n-1)
	}
	evs, _ := s.Audit(context.Background(), ses.ID)
	decided := 0
	for _, e := range evs {
		if e.Action == "request_approved" || e.Action == "request_rejected" {
			decided++
		}
	}
	if decided != 1 {
		t.Errorf("the audit log records %d decisions of the request", decided)
	}
}

// A thousand requests decided concurrently by twenty deciders (each with its
// own Store: its own connections and locks), each request tried by three of
// them at random (all twenty with AGENTINFRA_STRESS=1), each decider in its
// own order: every request is decided exactly once.
func TestThousandRequestsTwentyDeciders(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{MaxSessions: -1})
	const nreq, ndeciders = 1000, 20
	ids := make([]int64, 0, nreq)
	// One transaction for the setup (a commit each would cost 2,000 fsyncs).
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for range nreq {
			res, err := tx.ExecContext(ctx, `INSERT INTO sessions (owner, workspace, status, mode, created_at, updated_at) VALUES ('ana', '/w', 'active', 'local', 0, 0)`)
			if err != nil {
				return err
			}
			sid, _ := res.LastInsertId()
			res, err = tx.ExecContext(ctx, `INSERT INTO approvals (session_id, kind, tool, title, risk, status, created_at) VALUES (?, 'command', 'Bash', 't', 'low', 'pending', 0)`, sid)
			if err != nil {
				return err
			}
			id, _ := res.LastInsertId()
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tries := 3
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		tries = ndeciders
	}
	todo := make([][]int64, ndeciders)
	for _, id := range ids {
		for _, d := range rand.Perm(ndeciders)[:tries] {
			todo[d] = append(todo[d], id)
		}
	}
	wins := make([][]int64, ndeciders)
	var wg sync.WaitGroup
	errs := make(chan error, ndeciders)
	for d := range ndeciders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds, err := Open(ctx, s.Path(), Options{MaxSessions: -1})
			if err != nil {
				errs <- err
				return
			}
			defer ds.Close()
			order := todo[d]
			rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, id := range order {
				_, err := ds.Decide(ctx, Decision{RequestID: id, Approve: d%2 == 0, By: "ana", Surface: SurfaceTerminal, Reason: fmt.Sprint("decider ", d)})
				var de *DecidedError
				switch {
				case err == nil:
					wins[d] = append(wins[d], id)
				case errors.As(err, &de):
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	count := map[int64]int{}
	for d, w := range wins {
		for _, id := range w {
			count[id]++
			r, _ := s.Request(ctx, id)
			if r.Reason != fmt.Sprint("decider ", d) {
				t.Fatalf("request %d: decider %d won but the row says %q", id, d, r.Reason)
			}
		}
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Fatalf("request %d was decided %d times", id, count[id])
		}
	}
	var audited int
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM audit WHERE action IN ('request_approved','request_rejected')`).Scan(&audited)
	if audited != nreq {
		t.Fatalf("the audit log has %d decisions for %d requests", audited, nreq)
	}
}

// A writer killed with SIGKILL at random moments leaves a database that
// opens, passes integrity_check, and holds every decision the writer saw
// committed, consistent with its audit log.
func TestStoreSurvivesSIGKILLOfAWriter(t *testing.T) {
	ctx := context.Background()
	kills := 10
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		kills = 100
	}
	s := newStore(t, Options{MaxSessions: -1})
	path := s.Path()
	s.Close()
	var committed []int64
	for k := range kills {
		p := helper(t, "write", path)
		cmd, out := p.cmd, p.out
		lines := make(chan int64, 1000)
		go func() {
			for out.Scan() {
				id, _ := strconv.ParseInt(out.Text(), 10, 64)
				lines <- id
			}
			close(lines)
		}()
		// Kill it once it has committed something (start-up time varies
		// with the load), at a random moment of its next writes.
		select {
		case id, ok := <-lines:
			if ok {
				committed = append(committed, id)
			}
		case <-time.After(time.Minute):
			t.Fatal("the writer committed nothing within a minute")
		}
		time.Sleep(time.Duration(rand.IntN(80)+k%3*50) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for id := range lines {
			committed = append(committed, id)
		}
	}
	s2, err := Open(ctx, path, Options{MaxSessions: -1})
	if err != nil {
		t.Fatalf("the database does not open after the kills: %v", err)
	}
	defer s2.Close()
	var check string
	if err := s2.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if len(committed) == 0 {
		t.Fatal("the writer committed nothing before it was killed; the test proves nothing")
	}
	for _, id := range committed {
		r, err := s2.Request(ctx, id)
		if err != nil || (r.Status != StatusApproved && r.Status != StatusRejected) {
			t.Fatalf("request %d, reported committed, is %+v %v", id, r, err)
		}
	}
	// Every decided request has exactly one decision in the audit log.
	var bad int
	s2.db.QueryRowContext(ctx, `SELECT count(*) FROM approvals a WHERE a.status IN ('approved','rejected') AND
		(SELECT count(*) FROM audit e WHERE e.request_id = a.id AND e.action IN ('request_approved','request_rejected')) != 1`).Scan(&bad)
	if bad != 0 {
		t.Fatalf("%d decided requests disagree with the audit log", bad)
	}
	// And it is still writable: a new session and request work.
	ses := activeSession(t, s2, "ana")
	raise(t, s2, ses.ID, 0)
	t.Logf("%d kills, %d decisions committed and found", kills, len(committed))
}
