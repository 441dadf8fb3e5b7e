package metadata

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// taskBin is the real go-task binary (the test skips without it, or fails
// under AGENTINFRA_E2E=1).
func taskBin(t testing.TB) string {
	t.Helper()
	return e2etools.GoBin(t, "task")
}

// workspaceWith writes a Taskfile.yml holding body under `tasks:`.
func workspaceWith(t testing.TB, tasks string) string {
	t.Helper()
	dir := t.TempDir()
	writeTaskfile(t, dir, "Taskfile.yml", tasks)
	return dir
}

func writeTaskfile(t testing.TB, dir, name, tasks string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("version: '3'\n\ntasks:\n"+tasks), 0o644); err != nil {
		t.Fatal(err)
	}
}

func val(f Field) string {
	if f.Value == nil {
		return "<nil>"
	}
	return *f.Value
}

func errOf(f Field) string {
	if f.Error == nil {
		return ""
	}
	return *f.Error
}

// pidGone waits until pid no longer runs (a zombie waiting for its reaper
// counts as gone).
func pidGone(t testing.TB, pid int, within time.Duration) bool {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process checks read /proc")
	}
	for deadline := time.Now().Add(within); ; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		s := string(b)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the field did not record its child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %q", b)
	}
	return pid
}
