//go:build linux

package contain

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Proc names a process: its pid and start time (ProcStart; "" matches any
// process with the pid).
type Proc struct {
	PID   int
	Start string
}

// Member is how a process was found inside a run (RunOf).
type Member struct {
	// PID is the process asked about.
	PID int
	// Supervisor is the run's supervisor among pid's ancestors (zero when
	// the marker found it).
	Supervisor Proc
	// Marker is the AGENTINFRA_RUN value of pid or of an ancestor (""
	// when the ancestry found it): the run's scope token, its run ID first.
	Marker string
}

// RunID is the run the marker names ("" when the ancestry found it).
func (m Member) RunID() string {
	if i := strings.LastIndexByte(m.Marker, '.'); i > 0 {
		return m.Marker[:i]
	}
	return m.Marker
}

// Why says how the process was found inside a run.
func (m Member) Why() string {
	if m.Supervisor.PID != 0 {
		return fmt.Sprintf("process %d runs under the supervisor of a run (pid %d)", m.PID, m.Supervisor.PID)
	}
	return fmt.Sprintf("process %d runs inside run %s", m.PID, m.Marker)
}

// RunOf finds whether process pid belongs to a supervised run: a decision
// taken from inside a run is an agent deciding for itself or for another
// agent. Two checks, because an agent controls its own environment but not
// its ancestry:
//
//   - ancestry: one of pid's ancestors (not pid itself) is a run's
//     supervisor (supervisors, from the store). A supervisor is a child
//     subreaper (BecomeSubreaper), so a process its agent started stays its
//     descendant whatever it did: setsid, a double fork, a cleared
//     environment.
//   - the marker: pid or one of its ancestors was started with a run's
//     AGENTINFRA_RUN in its environment (what /proc/PID/environ shows),
//     which finds a run's processes even when its supervisor is not known
//     (a run of another workspace, a headless run).
//
// Processes of other users cannot be read and count as outside.
func RunOf(pid int, supervisors []Proc) (Member, bool) {
	for p, first := pid, true; p > 1; first = false {
		if !first {
			for _, s := range supervisors {
				if s.PID == p && (s.Start == "" || ProcStart(p) == s.Start) {
					return Member{PID: pid, Supervisor: s}, true
				}
			}
		}
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/environ"); err == nil {
			if i := bytes.Index(append([]byte{0}, env...), []byte("\x00"+EnvRun+"=")); i >= 0 {
				return Member{PID: pid, Marker: markerAt(env, i)}, true
			}
		}
		_, ppid, ok := stat(p)
		if !ok || ppid == p {
			break
		}
		p = ppid
	}
	return Member{}, false
}

// InsideRun is RunOf as a yes or no and the reason.
func InsideRun(pid int, supervisors []Proc) (bool, string) {
	m, ok := RunOf(pid, supervisors)
	if !ok {
		return false, ""
	}
	return true, m.Why()
}

// markerAt is the value of the marker found at i in env.
func markerAt(env []byte, i int) string {
	v := env[i+len(EnvRun)+1:] // i indexes "\x00" + env
	if j := bytes.IndexByte(v, 0); j >= 0 {
		v = v[:j]
	}
	return string(v)
}

// CallerInsideRun is InsideRun of this process: a command (approve,
// reject, …) run by an agent.
func CallerInsideRun(supervisors []Proc) (bool, string) {
	return InsideRun(os.Getpid(), supervisors)
}

// PeerPIDs finds the processes that hold the other end of a TCP
// connection from this machine (the client of the console or of MCP over
// HTTP): the socket whose local address is c's remote one, in
// /proc/net/tcp and tcp6, then the processes with that socket open. A
// peer from another machine gets an error that Is ErrRemotePeer; one of
// this machine whose process cannot be read (another user's) another
// error.
func PeerPIDs(c net.Conn) ([]int, error) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("the peer %v is not a TCP peer", c.RemoteAddr())
	}
	if !thisMachine(remote.IP) {
		return nil, fmt.Errorf("%w: %v", ErrRemotePeer, remote)
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode = socketInode(table, remote, local); inode != "" {
			break
		}
	}
	if inode == "" {
		return nil, fmt.Errorf("no socket of this machine is the peer %v", remote)
	}
	link := "socket:[" + inode + "]"
	var pids []int
	for _, pid := range procs() {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + fd.Name()); err == nil && l == link {
				pids = append(pids, pid)
				break
			}
		}
	}
	if len(pids) == 0 {
		return nil, errors.New("the process of the peer " + remote.String() + " cannot be read (another user's?)")
	}
	return pids, nil
}

// thisMachine reports whether ip is one of this machine's addresses: the
// loopback, or an address of one of its interfaces (a client of this
// machine that connected to the console's LAN address).
func thisMachine(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// socketInode finds in a /proc/net/tcp table the inode of the socket from
// local to remote.
func socketInode(table string, local, remote *net.TCPAddr) string {
	f, err := os.Open(table)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if sameAddr(fields[1], local) && sameAddr(fields[2], remote) {
			return fields[9]
		}
	}
	return ""
}

// sameAddr compares a /proc/net/tcp address (hex IP in 32-bit words of
// the host's byte order — little-endian on every machine agentinfra runs
// on — a colon, hex port) with a.
func sameAddr(hexAddr string, a *net.TCPAddr) bool {
	h, p, ok := strings.Cut(hexAddr, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw)%4 != 0 {
		return false
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.IP(raw).Equal(a.IP)
}
