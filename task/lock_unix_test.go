//go:build unix

package task

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestLockTimeoutFromEnv(t *testing.T) {
	ws := newWS(t)
	if st, _ := OpenStore(ws); st.LockTimeout != matrix.DefaultLockTimeout {
		got := st.LockTimeout
		t.Errorf("default lock timeout %v", got)
	}
	// The environment is the caller's, the workspace's Getenv: not the process's.
	t.Setenv(EnvLockTimeout, "1ms")
	ws, _ = workspace.New(ws.Root)
	ws.Getenv = func(k string) string { return map[string]string{EnvLockTimeout: "250ms"}[k] }
	if st, _ := OpenStore(ws); st.LockTimeout != 250*time.Millisecond {
		got := st.LockTimeout
		t.Errorf("lock timeout from env = %v", got)
	}
	// A held lock makes a writer give up after the configured wait, changing nothing.
	st, _ := OpenStore(ws)
	lock, err := os.OpenFile(st.LockPath(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Skip("flock unavailable:", err)
	}
	check := treehash.Guard(t, ws.Root)
	_, _, err = createTask(context.Background(), ws, CreateOptions{Description: "x", Mode: "coder"}, now)
	if !errors.Is(err, matrix.ErrLockTimeout) {
		t.Errorf("create under a held lock: %v", err)
	}
	check()
}
