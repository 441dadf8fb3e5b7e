package review

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// envSpawn makes the test binary a check that starts a process of its
// own in a new session (out of the check's process group, as a daemon
// would), writes that process's pid to the file it names, and waits.
const envSpawn = "REVIEW_TEST_SPAWN"

func TestMain(m *testing.M) {
	if pidFile := os.Getenv(envSpawn); pidFile != "" {
		child := exec.Command("sleep", "300")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		if err := os.WriteFile(pidFile, []byte(fmt.Sprint(child.Process.Pid)), 0o644); err != nil {
			os.Exit(2)
		}
		time.Sleep(300 * time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
