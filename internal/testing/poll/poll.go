// Package poll waits, in tests, for something another goroutine or process
// makes true (a file written, a row committed, a process gone): one helper
// instead of hand-written sleep loops, and never a fixed sleep "to let it
// settle".
//
// The timeout is a guard against a test that would hang, not a bound on how
// fast the code under test must be: it is generous (a loaded 2-core machine
// runs several packages' tests at once) and a condition that holds returns
// at its first check.
package poll

import (
	"fmt"
	"testing"
	"time"
)

// Timeout is how long Eventually waits before it fails the test. A minute
// was not enough once: in CI's -race pass, real gemini (node) beside a
// dozen race-built test binaries on 2 cores took more than that to ask its
// first permission (38–48 s for the whole test beside three CPU hogs, 14 s
// idle).
const Timeout = 2 * time.Minute

// Eventually checks cond until it returns true; if Timeout passes first, it
// fails the test with the message (fmt.Sprintf of format and args). The
// message is formatted then: an argument that is a fmt.Stringer (a
// process's output buffer) shows what it holds at the end.
func Eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	EventuallyWithin(t, Timeout, cond, format, args...)
}

// EventuallyWithin is Eventually with its own timeout, for a test whose
// point is that something happens within a bound it sets itself (a
// process outliving its run by more than its grace period is an orphan).
func EventuallyWithin(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("after %v: %s", timeout, fmt.Sprintf(format, args...))
	}
}

// EventuallyNil calls check until it returns nil; if Timeout passes first,
// it fails the test with check's last error (what was still wrong: "agent
// coder is still busy").
func EventuallyNil(t testing.TB, check func() error) {
	t.Helper()
	var last error
	if !Until(Timeout, func() bool { last = check(); return last == nil }) {
		t.Fatalf("after %v: %v", Timeout, last)
	}
}

// Until checks cond until it returns true (true) or timeout passes
// (false), for code that has no test to fail: a goroutine, a helper that
// returns an error. The checks start 1 ms apart and back off to 50 ms.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
