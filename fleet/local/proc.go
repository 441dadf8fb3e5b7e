package local

// procRef names a process so that a reused pid is not taken for it: the pid
// and the process's start time as the kernel reports it ("" where the
// platform cannot tell, and then the pid alone decides).
type procRef struct {
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"`
}

// refOf returns the procRef of a live pid.
func refOf(pid int) procRef { return procRef{PID: pid, Start: procStart(pid)} }

// alive reports whether the process p names is still running (a zombie is
// not running).
func (p procRef) alive() bool {
	if p.PID <= 0 || !pidAlive(p.PID) {
		return false
	}
	if p.Start == "" {
		return true
	}
	return procStart(p.PID) == p.Start
}
