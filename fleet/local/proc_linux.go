//go:build linux

package local

import (
	"os"
	"strconv"
	"strings"
)

// statFields returns the fields of /proc/PID/stat after the command name
// (field 3, the state, is index 0).
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// procStart is the start time of pid in clock ticks since boot ("" when gone).
func procStart(pid int) string {
	f := statFields(pid)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	f := statFields(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// childrenOf lists the pids whose parent is ppid.
func childrenOf(ppid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(ppid)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 1 && f[1] == want {
			out = append(out, pid)
		}
	}
	return out
}

// childrenVisible says whether the supervisor can see the agent CLI it started.
const childrenVisible = true
