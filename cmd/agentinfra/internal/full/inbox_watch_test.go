//go:build linux

package full

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// watchInbox runs the real `inbox --watch [args]` in dir until the test ends.
func watchInbox(t *testing.T, dir string, args ...string) (stdout, stderr *syncBuffer) {
	cmd := exec.Command(taskBinary(t), append([]string{"inbox", "--watch"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return stdout, stderr
}

// `inbox --watch` rings the bell when something new starts waiting (not
// for what waited when it started), and --quiet keeps it silent.
func TestInboxWatchRingsTheBellForWhatIsNew(t *testing.T) {
	dir, _, sesID := supervisedWorkspace(t)
	ws, _ := workspace.New(dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	out, errs := watchInbox(t, dir)
	quietOut, quietErrs := watchInbox(t, dir, "--quiet")
	poll.Eventually(t, func() bool {
		return strings.Contains(out.String(), "Run touch ok.txt") && strings.Contains(quietOut.String(), "Run touch ok.txt")
	}, "the watches list the pending request:\n%s\n%s", out, quietOut)
	if strings.Contains(errs.String(), "\a") {
		t.Fatalf("a bell for what already waited: %q", errs)
	}
	if _, err := st.RaisePrompt(context.Background(), store.NewPrompt{SessionID: sesID, Kind: store.PromptClarification, Text: "Which database?"}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, func() bool { return strings.Contains(errs.String(), "\a") }, "no bell for a new prompt: %q", errs)
	poll.Eventually(t, func() bool { return strings.Contains(quietOut.String(), "Which database?") }, "the quiet watch does not list the prompt:\n%s", quietOut)
	if strings.Contains(quietErrs.String(), "\a") {
		t.Errorf("--quiet rang the bell: %q", quietErrs)
	}
}
