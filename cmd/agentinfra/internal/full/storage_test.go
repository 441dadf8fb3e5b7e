package full

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/store"
)

// Issue 27, item 12: a damaged database made every command fail with
// "file is not a database (26)" and no way forward. Now each says what is
// wrong and the recovery step, which works.
func TestADamagedDatabaseHasAWayForward(t *testing.T) {
	bin := taskBinary(t)
	dir, _ := dispatchCLISetup(t)
	db := filepath.Join(dir, ".agent", "state", store.FileName)
	os.MkdirAll(filepath.Dir(db), 0o700)
	junk := bytes.Repeat([]byte("this is no database "), 500)
	if err := os.WriteFile(db, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, []string{"AGENTINFRA_ROOT=" + dir, "AGENTINFRA_USER=ana", "HOME=" + dir, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	for _, args := range [][]string{{"inbox"}, {"approve", "1"}, {"session", "list"}} {
		if out, code := run(args...); code != 6 || !strings.Contains(out, "is damaged") || !strings.Contains(out, "agentinfra session reset-db") {
			t.Errorf("%v on a damaged database: exit %d\n%s", args, code, out)
		}
	}
	out, code := run("session", "reset-db")
	if code != 0 || !strings.Contains(out, "aside to .agent/state/agentinfra.db.broken-") {
		t.Fatalf("session reset-db: exit %d\n%s", code, out)
	}
	aside, _ := filepath.Glob(db + ".broken-*")
	if len(aside) != 1 {
		t.Fatalf("the damaged file is not kept: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); !bytes.Equal(b, junk) {
		t.Fatalf("the file kept aside is not the damaged one")
	}
	if out, code := run("inbox"); code != 0 || !strings.Contains(out, "No pending requests.") {
		t.Errorf("inbox after the reset: exit %d\n%s", code, out)
	}
	if out, code := run("session", "reset-db"); code != 5 || !strings.Contains(out, "passes SQLite's quick check") {
		t.Errorf("a second reset of a healthy database: exit %d\n%s", code, out)
	}
	fs, _ := store.Failures(filepath.Dir(db))
	if len(fs) != 1 || fs[0].What != "reset" {
		t.Errorf("the log of storage failures: %+v", fs)
	}
}
