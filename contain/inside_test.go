//go:build linux

package contain

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// helperMain is this test binary run as a helper process:
//
//	supervisor PIDFILE  a child subreaper whose agent (marked) leaves a
//	                    process that left its session, was double-forked and
//	                    cleared its environment; its pid goes to PIDFILE.
//	                    Runs until its stdin closes.
//	connect ADDR        connects to ADDR, then waits until its stdin closes.
func helperMain(mode string) int {
	switch mode {
	case "supervisor":
		if err := BecomeSubreaper(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		agent := exec.Command("sh", "-c", `setsid sh -c 'env -i sleep 300.4 </dev/null >/dev/null 2>&1 & echo $! > "$0"' "$1"`, "sh", os.Args[1])
		agent.Env = append(os.Environ(), New("papi-1").Env())
		if out, err := agent.CombinedOutput(); err != nil {
			fmt.Fprintln(os.Stderr, err, string(out))
			return 1
		}
		io.Copy(io.Discard, os.Stdin)
		KillDescendants()
		return 0
	case "connect":
		c, err := net.Dial("tcp", os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	return 2
}

// helper starts the test binary as a helper; closing the returned writer
// ends it.
func helper(t *testing.T, mode string, env []string, args ...string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "CONTAIN_TEST_HELPER="+mode), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return cmd, in
}

// eventually waits for cond (poll.Eventually).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, cond, "never: %s", what)
}

// started runs `sh -c script` with env and returns the pid the script
// prints first (a process it started), left running until the test ends.
func started(t *testing.T, env []string, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the script printed %q", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return pid
}

// A process an agent left — out of its session, double-forked, with no
// environment — is found inside the run through its ancestry (its
// supervisor, a subreaper, adopted it); by the marker alone it is not.
// The supervisor itself, and a process beside the run, are outside.
func TestInsideRunFollowsAncestryNotTheEnvironment(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	sup, _ := helper(t, "supervisor", nil, pidFile)
	var escaped int
	eventually(t, "the agent's process wrote its pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return escaped > 0
	})
	t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })
	eventually(t, "the supervisor adopted it", func() bool { _, ppid, _ := stat(escaped); return ppid == sup.Process.Pid })
	// sleep, not env: a process in the middle of an exec shows an empty
	// environment for an instant, and env itself still has the marker.
	eventually(t, "the escaped process cleared its environment (env -i executed sleep)", func() bool {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", escaped))
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", escaped))
		return strings.TrimSpace(string(comm)) == "sleep" && len(env) == 0
	})
	sups := []Proc{{PID: sup.Process.Pid, Start: ProcStart(sup.Process.Pid)}}
	if in, why := InsideRun(escaped, sups); !in || !strings.Contains(why, strconv.Itoa(sup.Process.Pid)) {
		t.Errorf("the escaped process: inside %v (%s), want inside under its supervisor", in, why)
	}
	if in, _ := InsideRun(escaped, nil); in {
		t.Error("found inside without its supervisor: it has no marker left")
	}
	if in, _ := InsideRun(sup.Process.Pid, sups); in {
		t.Error("the supervisor itself is inside (its own prompt decides)")
	}
	if in, _ := InsideRun(escaped, []Proc{{PID: sup.Process.Pid, Start: "1"}}); in {
		t.Error("a supervisor's pid with another start time (a reused pid) counted")
	}
	beside := started(t, os.Environ(), "sleep 300.5 & echo $!; wait")
	if in, why := InsideRun(beside, sups); in {
		t.Errorf("a process beside the run is inside: %s", why)
	}
	if in, why := CallerInsideRun(sups); in {
		t.Errorf("the test itself is inside: %s", why)
	}
}

// Without a known supervisor (a run of another workspace) the marker
// finds a run's process, and a child that cleared its environment below it.
func TestInsideRunByTheMarker(t *testing.T) {
	scope := New("papi-2")
	child := started(t, append(os.Environ(), scope.Env()), "env -i sleep 300.6 & echo $!; wait")
	in, why := InsideRun(child, nil)
	if !in || !strings.Contains(why, scope.Token) {
		t.Fatalf("a cleared child of a marked process: inside %v (%s)", in, why)
	}
}

// The console and MCP over HTTP find who is at the other end of a
// loopback connection, to apply the same check to a request.
func TestPeerPIDsOfALoopbackConnection(t *testing.T) {
	for _, network := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(network, func(t *testing.T) {
			ln, err := net.Listen("tcp", network)
			if err != nil {
				t.Skipf("no %s here: %v", network, err)
			}
			defer ln.Close()
			scope := New("papi-3")
			client, _ := helper(t, "connect", []string{scope.Env()}, ln.Addr().String())
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			pids, err := PeerPIDs(c)
			if err != nil || !slices.Contains(pids, client.Process.Pid) {
				t.Fatalf("peers %v, %v; want the client %d", pids, err, client.Process.Pid)
			}
			if in, _ := InsideRun(pids[0], nil); !in {
				t.Error("the peer, started inside a run, is not found inside")
			}
		})
	}
}
