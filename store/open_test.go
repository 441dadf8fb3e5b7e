package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// openerEnv makes the test binary an opener process (see init): for each
// database path on stdin it opens (creating) the file, writes a session,
// closes it and prints "ok" or the error.
const openerEnv = "AGENTINFRA_STORE_OPENER"

// init, not TestMain's helperMain: an opener must wait on stdin before its
// first Open, so that all of them open at once.
func init() {
	if os.Getenv(openerEnv) == "" {
		return
	}
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		err := func() error {
			s, err := Open(ctx, in.Text(), Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			_, err = s.CreateSession(ctx, NewSession{Owner: "ana", Workspace: "/w"})
			return err
		}()
		if err != nil {
			fmt.Println(strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
	os.Exit(0)
}

// Eight processes (the first "agent start" of a fleet, say) create the same
// database at once, round after round (100 with AGENTINFRA_STRESS=1): every
// one opens it, the schema is migrated once, and each one's write is there.
// Before the WAL switch was
// made once per file and retried, 1–2 rounds in 100 failed with
// SQLITE_BUSY while one process switched the new file to WAL.
func TestEightProcessesCreateTheDatabaseAtOnce(t *testing.T) {
	const procs = 8
	rounds := 6
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		rounds = 100
	}
	type opener struct {
		in  *os.File
		out *bufio.Scanner
	}
	var ops []opener
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), openerEnv+"=1")
		cmd.Stderr = os.Stderr
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = inR
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		inR.Close()
		t.Cleanup(func() { inW.Close(); cmd.Wait() })
		ops = append(ops, opener{inW, bufio.NewScanner(stdout)})
	}
	ctx := context.Background()
	for round := range rounds {
		path := filepath.Join(t.TempDir(), FileName)
		for _, o := range ops { // all processes are started: go
			fmt.Fprintln(o.in, path)
		}
		for i, o := range ops {
			if !o.out.Scan() {
				t.Fatalf("round %d: opener %d exited", round, i)
			}
			if got := o.out.Text(); got != "ok" {
				t.Errorf("round %d: opener %d: %s", round, i, got)
			}
		}
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var sessions int
		s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&sessions)
		v, _ := userVersion(ctx, s.db)
		s.Close()
		if sessions != procs || v != len(migrations) {
			t.Fatalf("round %d: %d sessions at schema version %d, want %d at %d", round, sessions, v, procs, len(migrations))
		}
	}
}
