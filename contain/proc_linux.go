//go:build linux

package contain

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// ProcStart is the start time of pid in clock ticks since boot, as the
// kernel reports it ("" when the process is gone): with the pid it names a
// process so that a reused pid is not taken for it.
func ProcStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// Alive reports whether the process pid started at start (ProcStart; ""
// when unknown: the pid alone decides) still runs (a zombie does not).
func Alive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	state, _, ok := stat(pid)
	if !ok || !live(state) {
		return false
	}
	return start == "" || ProcStart(pid) == start
}
