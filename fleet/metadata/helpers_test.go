package metadata

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
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
	return poll.Until(within, func() bool { return agentstub.ProcessGone(pid) })
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
