//go:build !linux

package contain

import (
	"errors"
	"net"
)

// Without /proc the run's processes cannot be found: only the agent CLI's
// process group is signalled (by the runner).

// BecomeSubreaper is Linux's; elsewhere it does nothing.
func BecomeSubreaper() error { return nil }

// KillDescendants finds nothing without /proc.
func KillDescendants() int { return 0 }

func marked(needle string) []int { return nil }
func reap(pids []int)            {}

// ProcStart cannot be told without /proc.
func ProcStart(pid int) string { return "" }

// Alive cannot tell a dead process without /proc: any pid counts as
// alive (a live supervisor is never taken for a crashed one).
func Alive(pid int, start string) bool { return pid > 0 }

// Proc names a process.
type Proc struct {
	PID   int
	Start string
}

// Member is how a process was found inside a run.
type Member struct {
	PID        int
	Supervisor Proc
	Marker     string
}

// RunID is the run the marker names.
func (m Member) RunID() string { return m.Marker }

// Why says how the process was found inside a run.
func (m Member) Why() string { return "" }

// RunOf cannot read a process's ancestry without /proc: nothing is found
// inside a run.
func RunOf(pid int, supervisors []Proc) (Member, bool) { return Member{}, false }

// InsideRun cannot read a process's ancestry without /proc: nothing is
// found inside a run.
func InsideRun(pid int, supervisors []Proc) (bool, string) { return false, "" }

// CallerInsideRun is InsideRun of this process.
func CallerInsideRun(supervisors []Proc) (bool, string) { return false, "" }

// PeerPIDs needs /proc.
func PeerPIDs(c net.Conn) ([]int, error) {
	return nil, errors.New("the peer of a connection can only be found on Linux")
}
