//go:build linux

package full

// Issue 27, item 12: a database deleted mid-run stranded the session (the
// supervisor kept the deleted file, `approve 62` said "no request", the
// run waited out its request's one-hour timeout), and after a storage
// failure the dispatch, the run's record and the matrix disagreed. Replay
// with the real claude against a fake model that asks for `touch ok.txt`:
// delete the database while the request waits.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestDatabaseDeletedMidRunEndsTheRunClearly(t *testing.T) {
	dir, _, cmd, out := supervisedDispatch(t, nil)
	p := waitPending(t, dir, out)
	ws, _ := workspace.New(dir)
	db := store.PathIn(ws)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}

	// The run ends by itself, failed, saying why.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var runErr error
	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		select {
		case runErr = <-done:
			return true
		default:
			return false
		}
	}, "the dispatch did not end after its database was deleted:\n%s", out)
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) || exit.ExitCode() != 1 || !strings.Contains(out.String(), "was deleted while this process had it open") {
		t.Fatalf("dispatch after the database was deleted: %v\n%s", runErr, out)
	}

	// A person's decision of the lost request says what happened.
	id := strconv.FormatInt(p.ID, 10)
	approve := exec.Command(taskBinary(t), "approve", id)
	approve.Dir, approve.Env = dir, []string{"AGENTINFRA_ROOT=" + dir, "AGENTINFRA_USER=ana", "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	said, err := approve.CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(string(said), "pending in a database that is gone") ||
		!strings.Contains(string(said), "was deleted") || !strings.Contains(string(said), "task a1b2c3 moved to BLOCKED") {
		t.Errorf("approve %s of a request lost with the database: %v\n%s", id, err, said)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.txt")); err == nil {
		t.Error("ok.txt exists: nobody approved")
	}
	t.Logf("the dispatch said:\n%s\napprove %s said:\n%s", out, id, said)

	// The result file, the matrix and the run's row agree.
	files, _ := filepath.Glob(filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "tracking", "*_result.json"))
	if len(files) != 1 {
		t.Fatalf("result files: %v", files)
	}
	var res struct {
		RunID       string `json:"run_id"`
		Outcome     string `json:"outcome"`
		Reason      string `json:"reason"`
		StatusAfter string `json:"status_after"`
	}
	if b, err := os.ReadFile(files[0]); err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("the result file: %v", err)
	}
	if res.Outcome != agentrun.OutcomeFailed || !strings.Contains(res.Reason, "was deleted") || res.StatusAfter != "BLOCKED" {
		t.Errorf("the result file says %+v", res)
	}
	if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | BLOCKED |") {
		t.Errorf("the task is not BLOCKED:\n%s", m)
	}
	readme := readText(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"))
	if !strings.Contains(readme, "was deleted") {
		t.Errorf("the task's status log does not give the reason:\n%s", readme)
	}
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.Run(context.Background(), res.RunID)
	if err != nil || !row.Finished || row.Outcome != agentrun.OutcomeFailed {
		t.Errorf("the run's row in the database now at the path: %+v %v", row, err)
	}
	if live, _ := st.LiveSupervisors(context.Background()); len(live) != 0 {
		t.Errorf("sessions still hold a place: %v", live)
	}
	fs, _ := store.Failures(store.StateDir(ws))
	if len(fs) == 0 || fs[0].What != "deleted" || len(fs[0].Requests) != 1 || fs[0].Requests[0] != p.ID {
		t.Errorf("the log of storage failures: %+v", fs)
	}
}
