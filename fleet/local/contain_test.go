package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// endings are the three ways a run is ended from outside: each must leave
// no process the agent started, even one in a session of its own.
var endings = []struct {
	name string
	end  func(t *testing.T, f *Fleet, agent string)
}{
	{"stop", func(t *testing.T, f *Fleet, agent string) {
		if _, err := f.Stop(context.Background(), agent); err != nil {
			t.Fatal(err)
		}
	}},
	{"delete", func(t *testing.T, f *Fleet, agent string) {
		if _, err := f.Delete(context.Background(), agent, true); err != nil {
			t.Fatal(err)
		}
	}},
	{"kill -9 of the supervisor", func(t *testing.T, f *Fleet, agent string) {
		var rec runRecord
		if ok, err := statefile.ReadJSON(f.p.file(agent, runFile), &rec); !ok || err != nil || rec.Supervisor.PID == 0 {
			t.Fatalf("run.json: %+v, %v", rec, err)
		}
		if err := syscall.Kill(rec.Supervisor.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, rec.Supervisor.PID)
		// The next command that looks at the agent records the run and ends
		// what it left.
		a, err := f.Show(context.Background(), agent)
		if err != nil || a.Status != fleet.StatusIdle {
			t.Fatalf("after the supervisor's death: %s, %v", a.Status, err)
		}
	}},
}

// processesWith lists the live processes whose argv is exactly argv.
func processesWith(argv ...string) []int {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(b, want) || !pidAlive(pid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// waitNoProcess fails unless no process with argv is left within 10 s.
func waitNoProcess(t *testing.T, argv ...string) {
	t.Helper()
	var left []int
	if !poll.Until(10*time.Second, func() bool { left = processesWith(argv...); return len(left) == 0 }) {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("%q is still running (pids %v) after the run ended: left behind", strings.Join(argv, " "), left)
	}
}

// With the stub agent: a grandchild it starts in a session of its own
// outlives the CLI's process group, and each ending kills it.
func TestEndingARunLeavesNoProcessOfTheAgent(t *testing.T) {
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ws := newRepo(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			f := testFleet(t, ws, "STUB_MODE=detach", "STUB_HANG=1", "STUB_PIDFILE="+pidFile)
			if _, err := f.Create(context.Background(), fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, f, "papi", fleet.StatusBusy)
			detached := readPid(t, pidFile)
			var rec runRecord
			statefile.ReadJSON(f.p.file("papi", runFile), &rec)
			if rec.Scope.Zero() || !hasMarker(detached, rec.Scope) {
				t.Fatalf("the detached grandchild %d does not carry the run's marker %q", detached, rec.Scope.Token)
			}
			e.end(t, f, "papi")
			waitGone(t, detached)
			waitGone(t, rec.Child.PID)
		})
	}
}

// hasMarker reports whether pid's environment carries the scope's marker.
func hasMarker(pid int, s contain.Scope) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return bytes.Contains(append([]byte{0}, b...), []byte("\x00"+s.Env()+"\x00"))
}

// A run that times out (fleet.timeout) leaves nothing either.
func TestATimedOutRunLeavesNoProcessOfTheAgent(t *testing.T) {
	ws := newRepo(t)
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("fleet:\n  timeout: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := testFleet(t, ws, "STUB_MODE=detach", "STUB_HANG=1", "STUB_PIDFILE="+pidFile)
	if _, err := f.Create(context.Background(), fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	detached := readPid(t, pidFile)
	waitStatus(t, f, "papi", fleet.StatusIdle)
	waitGone(t, detached)
	h, err := f.History(context.Background(), "papi", 1, 1)
	if err != nil || h.Tasks[0].Status != fleet.RunFailed || !strings.HasPrefix(h.Tasks[0].ExitReason, "timed out") {
		t.Fatalf("the timed-out run: %+v, %v", h.Tasks, err)
	}
}
