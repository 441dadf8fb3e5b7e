//go:build linux

package contain

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process the reaper of its orphaned
// descendants (PR_SET_CHILD_SUBREAPER): a descendant whose parent exits is
// re-parented here instead of to init, so KillDescendants still finds it.
// Only for a process that runs one run (it adopts every orphan below it).
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// KillDescendants kills every live descendant of this process (children,
// theirs, ...) with SIGKILL, again until none is left (at most 2 s), and
// reaps its own children among them. For a process that runs one run, once
// the agent CLI it waited for has exited. It returns how many it signalled.
func KillDescendants() int {
	self := os.Getpid()
	killed := map[int]bool{} // a dying process may be listed again: counted once
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := descendants(self)
		if len(pids) == 0 || time.Now().After(deadline) {
			return len(killed)
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		reap(pids)
		time.Sleep(5 * time.Millisecond)
	}
}

// procs lists the pids under /proc.
func procs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// stat returns the state and parent pid of pid (ok false when it is gone).
func stat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid, true
}

func live(state byte) bool { return state != 'Z' && state != 'X' }

// marked lists the live processes whose environment holds needle
// ("\x00KEY=VALUE\x00").
func marked(needle string) []int {
	self := os.Getpid()
	var out []int
	nb := []byte(needle)
	for _, pid := range procs() {
		if pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		if !bytes.Contains(append(append([]byte{0}, env...), 0), nb) {
			continue
		}
		if st, _, ok := stat(pid); ok && live(st) {
			out = append(out, pid)
		}
	}
	return out
}

// descendants lists the live descendants of root.
func descendants(root int) []int {
	children := map[int][]int{}
	states := map[int]byte{}
	for _, pid := range procs() {
		if st, ppid, ok := stat(pid); ok {
			children[ppid] = append(children[ppid], pid)
			states[pid] = st
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if live(states[c]) {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// reap collects those of pids that are this process's children and have
// exited (a subreaper's adopted orphans, killed): only those pids, never
// another child's exit that os/exec waits for.
func reap(pids []int) {
	self := os.Getpid()
	for _, pid := range pids {
		if _, ppid, ok := stat(pid); !ok || ppid != self {
			continue
		}
		for range 20 {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if got == pid || err != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
