// Package agentstub builds and watches the stand-in agent CLI (the program in
// ./stub) that the runner, dispatch, CLI and MCP tests start instead of a real
// gemini, claude or codex: hangs, crashes, garbage, huge output, signals. It
// is for tests only.
package agentstub

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/internal/testing/testbin"
)

// Build returns the stub's path, built once per source tree for every
// test process (package testbin).
func Build(t testing.TB) string {
	t.Helper()
	return testbin.Path(t, testbin.Stub)
}

// Install copies a fresh build of the stub to dir/node_modules/.bin/name, the
// layout $AGENTINFRA_TOOLS points at, and returns dir.
func Install(t testing.TB, dir, name string) string {
	t.Helper()
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(Build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Named is a copy of the stub named name (the CLI it stands in for), in a
// folder of its own.
func Named(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(Install(t, t.TempDir(), name), "node_modules", ".bin", name)
}

// ProcessGone reports whether pid no longer exists (or is only a zombie).
func ProcessGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) STATE ...
	s := string(st)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// WaitGone fails the test when pid (the stub's grandchild) outlives the run by
// 10 s: an orphan left behind.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	if !poll.Until(10*time.Second, func() bool { return ProcessGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d (the stub's grandchild) is still alive after the run ended: orphan left behind", pid)
	}
}

// ReadPid waits for the stub to write its grandchild's pid to path.
// CancelOncePidWritten calls cancel, in the background, once the hanging
// stub has written its grandchild's pid to path (or after 20 s). The stub
// announces its session just before it writes the pid, so a test that cancels
// on the session event uses this to still find the grandchild it must see
// die.
func CancelOncePidWritten(path string, cancel func()) {
	go func() {
		poll.Until(20*time.Second, func() bool {
			b, err := os.ReadFile(path)
			return err == nil && len(b) > 0
		})
		cancel()
	}()
}

func ReadPid(t testing.TB, path string) int {
	t.Helper()
	var b []byte
	poll.Eventually(t, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0
	}, "the stub never wrote its grandchild's pid to %s", path)
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}
