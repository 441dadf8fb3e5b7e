//go:build linux

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// renameat2 by architecture, and RENAME_EXCHANGE.
var renameat2 = map[string]string{"amd64": "316", "arm64": "276", "386": "353", "arm": "382", "riscv64": "276"}

const renameExchange = "0x2"

// Issue 18, item 2, the exact repro: the real binary under strace, its
// renames held back 1.5 s at entry, and `sed -i` (which saves by rename)
// editing the matrix while agentinfra's swap is held back. Before, the
// editor's edit was silently gone. Now the file that comes out of the swap
// is seen to be sed's, the swap is undone, and the update is made again on
// sed's version: both edits are in the file.
func TestSedSaveDuringTheRenameIsKept(t *testing.T) {
	if os.Getenv(e2etools.EnvE2E) != "1" { // a process under strace -f: seconds, more on a loaded machine
		t.Skipf("end-to-end, runs with %s=1 (matrix.TestRenameEditorSaveBeforeTheReplaceIsKept runs by default)", e2etools.EnvE2E)
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatalf("strace is not installed and %s=1", e2etools.EnvE2E)
	}
	nr, ok := renameat2[runtime.GOARCH]
	if !ok {
		t.Skip("renameat2's number is not known on " + runtime.GOARCH)
	}
	r := newCrashRig(t)
	id := r.create("the task agentinfra blocks")
	m := r.ws.MatrixPath()
	if err := os.WriteFile(m, append([]byte(readText(t, m)), "\n## Notes\n\ncounter: 0\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(strace, "-f", "-o", filepath.Join(t.TempDir(), "strace.log"), "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_enter=1500000", r.bin, "task", "update", id, "--status", "BLOCKED")
	cmd.Dir, cmd.Env = r.root, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until agentinfra is held at the entry of its swap (renameat2
	// with RENAME_EXCHANGE), not before: no timing guess.
	if !poll.Until(poll.Timeout, func() bool { return inExchange(cmd.Process.Pid, nr) }) {
		_ = cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("agentinfra never reached its swap:\n%s", out.String())
	}
	if b, err := exec.Command("sed", "-i", "s/counter: 0/counter: 1 (IMPORTANT)/", m).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v\n%s", err, b)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agentinfra under strace: %v\n%s", err, out.String())
	}
	got := readText(t, m)
	if !strings.Contains(got, "counter: 1 (IMPORTANT)") {
		t.Errorf("sed's edit is gone:\n%s", got)
	}
	if !strings.Contains(got, "| "+id+" | BLOCKED |") {
		t.Errorf("agentinfra's update is not in the file:\n%s", got)
	}
}

// inExchange reports whether a thread of the strace'd tree (pid is strace;
// its children are agentinfra's) is held at the entry of renameat2 with
// RENAME_EXCHANGE.
func inExchange(stracePID int, nr string) bool {
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/syscall")
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		// "NR arg0 arg1 arg2 arg3 arg4 ..." (arg4 is renameat2's flags)
		if len(f) >= 6 && f[0] == nr && f[5] == renameExchange && descendsFrom(p, stracePID) {
			return true
		}
	}
	return false
}

func descendsFrom(syscallPath string, ancestor int) bool {
	pid := strings.Split(syscallPath, "/")[2]
	for range 10 {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces; the ppid follows the last ')'.
		rest := string(b[bytes.LastIndexByte(b, ')')+2:])
		ppid := strings.Fields(rest)[1]
		if ppid == strconv.Itoa(ancestor) {
			return true
		}
		pid = ppid
	}
	return false
}
