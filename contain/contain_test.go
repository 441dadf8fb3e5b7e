//go:build linux

package contain

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

func TestMain(m *testing.M) {
	if os.Getenv("CONTAIN_TEST_SUBREAPER") == "1" {
		os.Exit(subreaperMain())
	}
	if h := os.Getenv("CONTAIN_TEST_HELPER"); h != "" {
		os.Exit(helperMain(h))
	}
	os.Exit(m.Run())
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	st, _, ok := stat(pid)
	return ok && live(st)
}

// startDetached runs a shell with env that starts `sleep SECS` in a new
// session of its own (as gemini runs shell commands, or a daemon) and
// exits; it returns the sleep's pid.
func startDetached(t *testing.T, env []string, secs string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "setsid sleep "+secs+" >/dev/null 2>&1 </dev/null & echo $!")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	poll.Eventually(t, func() bool { return alive(pid) }, "pid %d never ran", pid)
	return pid
}

// A process that left the run's session and process group is found by
// its marker and killed; another run's process is not touched.
func TestKillEndsTheScopeOnly(t *testing.T) {
	run, other := New("papi-3"), New("papi-3")
	if run.Token == other.Token || !strings.HasPrefix(run.Token, "papi-3.") {
		t.Fatalf("tokens %q %q: not unique per run", run.Token, other.Token)
	}
	mine := startDetached(t, []string{run.Env()}, "300.1")
	theirs := startDetached(t, []string{other.Env()}, "300.2")
	if m := run.Members(); len(m) != 1 || m[0] != mine {
		t.Fatalf("members %v, want [%d]", m, mine)
	}
	if n := run.Kill(); n != 1 {
		t.Errorf("Kill signalled %d processes, want 1", n)
	}
	poll.Eventually(t, func() bool { return !alive(mine) }, "pid %d of the run is still alive", mine)
	if !alive(theirs) {
		t.Fatalf("pid %d of another run was killed", theirs)
	}
	if n := (Scope{}).Kill(); n != 0 {
		t.Errorf("the zero scope killed %d", n)
	}
}

// A subreaper adopts an orphan that cleared its environment (no marker) and
// KillDescendants ends it; the test runs it in a process of its own.
func TestSubreaperKillsOrphansWithoutTheMarker(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CONTAIN_TEST_SUBREAPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var pid int
	var adopted, gone bool
	if _, err := fmt.Sscanf(string(out), "%d %t %t", &pid, &adopted, &gone); err != nil {
		t.Fatalf("helper said %q: %v", out, err)
	}
	if !adopted || !gone || alive(pid) {
		t.Fatalf("orphan %d: adopted by the subreaper %v, gone after KillDescendants %v", pid, adopted, gone)
	}
}

func subreaperMain() int {
	if err := BecomeSubreaper(); err != nil {
		fmt.Println(err)
		return 1
	}
	// env -i: the orphan carries no marker; sh exits at once, orphaning it.
	out, err := exec.Command("sh", "-c", "env -i sleep 300.3 >/dev/null 2>&1 </dev/null & echo $!").Output()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	adopted := poll.Until(poll.Timeout, func() bool {
		_, ppid, ok := stat(pid)
		return ok && ppid == os.Getpid()
	})
	KillDescendants()
	gone := true
	if _, _, ok := stat(pid); ok { // reaped: no /proc entry at all, not even a zombie
		gone = false
		syscall.Kill(pid, syscall.SIGKILL)
	}
	fmt.Println(pid, adopted, gone)
	return 0
}

// BenchmarkMembers is what finding a run's processes costs: one scan of
// /proc/*/environ (114 processes on the test machine: ≈ 4 ms of CPU).
func BenchmarkMembers(b *testing.B) {
	s := New("bench")
	for b.Loop() {
		s.Members()
	}
	b.ReportMetric(float64(len(procs())), "procs")
}
