// Package contain keeps an agent run's processes inside the run: no process
// an agent started outlives it, including descendants that called setsid or
// daemonized (gemini runs every shell command in a new session of its own,
// so signalling the agent CLI's process group is not enough).
//
// Two mechanisms, because neither alone covers every case:
//
//   - A marker: every process of a run is started with AGENTINFRA_RUN=TOKEN
//     in its environment (Scope.Env), which everything it starts inherits.
//     Scope.Kill finds them by scanning /proc/*/environ, wherever they were
//     re-parented, and kills them. It works from any process — the next
//     command that finds a run whose supervisor was killed with SIGKILL
//     ends what that run left.
//   - A child subreaper: a process that runs one run at a time (the fleet's
//     supervisor) calls BecomeSubreaper, so that orphaned descendants are
//     re-parented to it instead of to init; KillDescendants then ends every
//     one of them, including a program that cleared its environment.
//
// What escapes both: a descendant that cleared its environment and whose
// subreaper died (SIGKILL of the supervisor), and processes of another user
// (their environ cannot be read). cgroups would close these gaps where they
// are delegated to the user; they are not used (not available unprivileged
// on most machines agentinfra runs on). Without /proc (not Linux) Kill and
// KillDescendants find nothing: only the CLI's process group is signalled.
package contain

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"syscall"
	"time"
)

// EnvRun names the marker variable in a run's processes.
const EnvRun = "AGENTINFRA_RUN"

// ErrRemotePeer is PeerPIDs' error for a peer on another machine: no
// process of this machine, so none of a run's.
var ErrRemotePeer = errors.New("the peer is on another machine")

// Scope is the processes of one run: those whose environment carries
// AGENTINFRA_RUN=Token.
type Scope struct {
	Token string `json:"token"`
}

// New returns the scope of a new run: runID made unique on this machine
// (two workspaces may each have a run papi-3).
func New(runID string) Scope {
	var b [6]byte
	rand.Read(b[:])
	id := strings.Map(func(r rune) rune {
		if r == '=' || r <= ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, runID)
	return Scope{Token: id + "." + hex.EncodeToString(b[:])}
}

// Env is the KEY=VALUE entry that marks a process as the run's.
func (s Scope) Env() string { return EnvRun + "=" + s.Token }

// Zero reports whether s marks nothing (a run recorded before markers).
func (s Scope) Zero() bool { return s.Token == "" }

// Members lists the live processes of the scope (zombies excluded).
func (s Scope) Members() []int {
	if s.Zero() {
		return nil
	}
	return marked("\x00" + s.Env() + "\x00")
}

// Kill ends every process of the scope with SIGKILL, again until a scan
// finds none (a process forking meanwhile is caught by the next scan), for
// at most 2 s, and reaps those that are this process's children. It
// returns how many processes it signalled.
func (s Scope) Kill() int {
	if s.Zero() {
		return 0
	}
	// A process already sent SIGKILL may still be listed for a moment (it
	// has not finished dying on a loaded machine): it is counted once.
	killed := map[int]bool{}
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := s.Members()
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
