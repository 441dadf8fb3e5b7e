//go:build linux

package contain

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The access rights agentinfra's ruleset handles: the filesystem rights of
// Landlock ABI 7 (what this code was tried on; on a newer kernel the
// later rights, e.g. connecting to UNIX sockets by path, stay allowed) and
// signals to processes outside the sandbox (ABI 6). The network is not
// restricted: the CLIs talk to their providers.
var handled = landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: ll.ScopeSignal}.BestEffort()

const (
	readRights  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fileRights  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	writeRights = readRights | fileRights | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym | ll.AccessFSRefer
)

// devices are the device files a CLI reads and writes (and its terminal).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// Support is what this machine offers to contain an agent's processes.
type Support struct {
	// ABI is the kernel's Landlock ABI version (0: no Landlock).
	ABI int `json:"landlock_abi"`
	// Why says why Landlock is not there ("" when it is).
	Why string `json:"why,omitempty"`
	// Mount says a mount namespace can hide a folder inside one the agent
	// may write (see Sandbox.Mount).
	Mount bool `json:"mount_namespace"`
}

var (
	supportOnce sync.Once
	support     Support
)

// Supported reports, once per process, what the kernel offers.
func Supported() Support {
	supportOnce.Do(func() {
		abi, err := ll.LandlockGetABIVersion()
		switch {
		case err != nil:
			support.Why = fmt.Sprintf("the kernel has no Landlock (%v): it needs Linux 5.13 or later with Landlock enabled at boot (lsm=landlock,…)", err)
		case abi <= 0:
			support.Why = "the kernel reports no Landlock ABI"
		default:
			support.ABI = abi
		}
		support.Mount = probeMount()
	})
	return support
}

// Setup gives cmd its environment (ChildEnv: the inherited one unless
// clean, less agentinfra's credentials, plus adds) and, when adds carry a
// sandbox (Sandbox.Env) and the kernel has Landlock, starts it through the
// trampoline: cmd.Path becomes this program, which applies the sandbox to
// itself and executes the real one with cmd.Args. It is the one place an
// agent CLI's process is prepared; call it last, before cmd.Start.
func Setup(cmd *exec.Cmd, clean bool, adds ...[]string) error {
	s, boxed := setEnv(cmd, clean, adds)
	if !boxed || cmd.Err != nil || Supported().ABI == 0 {
		return nil // without Landlock the run says so once at its start (Sandbox.Warning)
	}
	s.Exe = cmd.Path
	s.plan(cmd.Dir, cmd.Env)
	if s.Mount {
		if !Supported().Mount {
			s.Mount = false // hidden by Landlock alone: see grant
		} else if err := s.mountPoints(); err != nil {
			return err
		}
	}
	cmd.Path = "/proc/self/exe"
	cmd.Env = append(cmd.Env, s.Env())
	if s.Mount {
		inNamespace(cmd)
	}
	return nil
}

// mountPoints creates the folders to hide that do not exist yet inside a
// writable one (a config folder in /tmp): the agent could otherwise create
// one and put an allowlist there.
func (s Sandbox) mountPoints() error {
	for _, h := range s.Hide {
		for _, w := range s.Write {
			if within(h, w) {
				if err := os.MkdirAll(h, 0o700); err != nil {
					return fmt.Errorf("sandbox: create %s to hide it: %w", h, err)
				}
			}
		}
	}
	return nil
}

// inNamespace starts cmd in a mount namespace of its own: as root it has
// the right to mount; anyone else gets a user namespace in which the
// trampoline holds CAP_SYS_ADMIN (an ambient capability it drops before
// executing the CLI), with the same user and group IDs as outside.
func inNamespace(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWNS
	if os.Geteuid() == 0 {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
}

// probeMount reports whether a child can be started in a mount namespace
// of its own and mount there (user namespaces may be disabled, or denied by
// AppArmor). The probe is this program as the trampoline with nothing to
// execute.
func probeMount() bool {
	b, _ := json.Marshal(Sandbox{Mount: true})
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{EnvSandbox + "=" + string(b)}
	inNamespace(cmd)
	return cmd.Run() == nil
}

// init is the trampoline: a process started by Setup applies its sandbox
// and executes the CLI, before anything else of this program runs. The
// runtime runs init on the main thread, locked to it: the rules and the
// exec act on that one thread, which the CLI then is.
func init() {
	v, ok := os.LookupEnv(EnvSandbox)
	if !ok {
		return
	}
	var s Sandbox
	if json.Unmarshal([]byte(v), &s) != nil || (s.Exe == "" && !s.Mount) {
		return // not ours to act on: this program runs as itself
	}
	os.Unsetenv(EnvSandbox)
	if s.Mount {
		if err := s.hide(); err != nil {
			fmt.Fprintf(os.Stderr, "agentinfra: cannot hide %v from the agent: %v\n", s.Hide, err)
			os.Exit(126)
		}
	}
	if s.Exe == "" { // the probe
		os.Exit(0)
	}
	if err := s.restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "agentinfra: cannot confine %s with Landlock: %v\n", s.Exe, err)
		os.Exit(126)
	}
	if s.Mount && os.Geteuid() != 0 {
		unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	}
	err := syscall.Exec(s.Exe, os.Args, os.Environ())
	fmt.Fprintf(os.Stderr, "agentinfra: execute %s: %v\n", s.Exe, err)
	os.Exit(127)
}

// hide covers each folder to hide with an empty read-only file system, in
// the process's own mount namespace (made private first, so that nothing
// reaches the rest of the machine). Landlock then forbids unmounting it.
func (s Sandbox) hide() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	targets := s.Hide
	if s.Exe == "" {
		targets = []string{os.TempDir()}
	}
	for _, h := range targets {
		if _, err := os.Stat(h); errors.Is(err, os.ErrNotExist) {
			continue // outside every writable folder: Landlock keeps it from being made
		}
		if err := unix.Mount("agentinfra-hidden", h, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=000"); err != nil {
			return fmt.Errorf("cover %s: %w", h, err)
		}
	}
	return nil
}

// restrict applies the Landlock ruleset to this thread (and so to the
// program it executes and all its descendants).
func (s Sandbox) restrict() error {
	var hidden []string
	if !s.Mount {
		hidden = s.Hide
	}
	write := landlock.AccessFSSet(writeRights)
	if abi, _ := ll.LandlockGetABIVersion(); abi < 2 {
		// ABI 1 cannot grant moving files between folders (it always denies
		// it); asking for it would make go-landlock's best effort do nothing.
		write &^= ll.AccessFSRefer
	}
	var rules []landlock.Rule
	rules = grant(rules, "/", readRights, hidden)
	for _, w := range s.Write {
		rules = grant(rules, w, write, hidden)
	}
	for _, d := range devices {
		rules = append(rules, pathRule(d, write).WithIoctlDev())
	}
	fd, flags, err := handled.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err
	}
	defer syscall.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return ll.LandlockRestrictSelf(fd, flags)
}

// pathRule grants rights on path, only the file rights among them when it
// is not a folder (Landlock refuses folder rights on a file).
func pathRule(path string, rights landlock.AccessFSSet) landlock.FSRule {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		rights &= fileRights
	}
	return landlock.PathAccess(rights, path).IgnoreIfMissing()
}

// grant adds the rules that give rights on the tree at root, except on the
// hidden folders inside it. Landlock grants whole trees, so a root with a
// hidden folder below is split: every entry beside the way to the hidden
// folder gets the rights, the folders on the way only the right to list
// them (a right on them would reach the hidden folder too). New entries in
// those folders are then not allowed: that is why a folder to hide inside
// a writable one is rather covered by a mount (Sandbox.Mount).
func grant(rules []landlock.Rule, root string, rights landlock.AccessFSSet, hidden []string) []landlock.Rule {
	if _, err := os.Stat(root); err != nil {
		return rules
	}
	split := false
	for _, h := range hidden {
		if within(root, h) {
			return rules // root is hidden itself
		}
		if within(h, root) {
			split = true
		}
	}
	if !split {
		return append(rules, pathRule(root, rights))
	}
	rules = append(rules, landlock.PathAccess(rights&ll.AccessFSReadDir, root).IgnoreIfMissing())
	entries, err := os.ReadDir(root)
	if err != nil {
		return rules
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			// A rule acts on what the link leads to: grant it only when that
			// is neither hidden nor holds something hidden.
			t, err := filepath.EvalSymlinks(p)
			if err != nil || touches(t, hidden) {
				continue
			}
			p = t
		}
		rules = grant(rules, p, rights, hidden)
	}
	return rules
}

// touches reports whether path is hidden, or holds something hidden.
func touches(path string, hidden []string) bool {
	for _, h := range hidden {
		if within(path, h) || within(h, path) {
			return true
		}
	}
	return false
}
