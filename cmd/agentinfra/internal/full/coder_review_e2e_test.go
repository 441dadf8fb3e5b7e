//go:build linux

package full

// Review and land on Coder, end to end (issue 31): the repository is on a
// remote (a bare repository), the person's workspace and each Coder
// workspace are clones of it; a supervised agent's run on a matrix task
// ends in its workspace (the real claude against the fake model, through
// a real `agentinfra agent host`), its branch is pushed to the remote, and
// the person's agentinfra records the change from there and lands it in
// their clone.

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

func TestACoderAgentsChangeIsPushedAndLandsHere(t *testing.T) {
	e2etools.Bin(t, "claude")
	fake := fakemodel.NewClaudeScript(t, fakemodel.ShellOnce("greeting", "echo hello > greeting.txt", "done"))
	w := newHostedWorld(t, fake)
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v in %s: %v %s", args, dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// The person's workspace is a clone of the remote, with a file of
	// their own they are editing.
	fakemodel.WriteFile(t, filepath.Join(w.root, "notes.txt"), "notes\n")
	gitIn(w.root, "init", "-q", "-b", "main")
	gitIn(w.root, "config", "user.email", "ana@example.com")
	gitIn(w.root, "config", "user.name", "Ana")
	code, out, errOut := runCLI(t, w.root, w.env, "task", "create", "-d", "Write the greeting file", "-m", "coder", "--json")
	if code != 0 {
		t.Fatalf("task create: exit %d %s", code, errOut)
	}
	var created struct {
		Task struct{ ID string } `json:"task"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Task.ID == "" {
		t.Fatalf("task create --json: %v %s", err, out)
	}
	id := created.Task.ID
	gitIn(w.root, "add", "-A")
	gitIn(w.root, "commit", "-qm", "init")
	w.remote = filepath.Join(t.TempDir(), "origin.git")
	gitIn(w.root, "clone", "-q", "--bare", w.root, w.remote)
	gitIn(w.root, "remote", "add", "origin", w.remote)

	code, out, errOut = runCLI(t, w.root, w.env, "agent", "create", "ws-r", "--project", "Supervised", "--approval-mode", "ask", "--cli", "claude",
		"--spec", "Wait for a task", "--json")
	if code != 0 {
		t.Fatalf("agent create: exit %d %s %s", code, out, errOut)
	}
	waitIdle(t, w, "ws-r")
	if code, out, errOut := runCLI(t, w.root, w.env, "agent", "start", "ws-r", "--task", id); code != 0 {
		t.Fatalf("agent start --task: exit %d %s %s", code, out, errOut)
	}
	req := w.waitInbox("ws-r asks to write the greeting", func(m map[string][]inboxItem) bool { return len(m["ws-r"]) == 1 })["ws-r"][0]
	if code, out, errOut := runCLI(t, w.root, w.env, "approve", strconv.FormatInt(req.ID, 10)); code != 0 {
		t.Fatalf("approve %d: exit %d %s %s", req.ID, code, out, errOut)
	}
	w.waitFile("ws-r", "greeting.txt")
	waitIdle(t, w, "ws-r") // the run's end is seen: the change is published and recorded

	// The branch is on the remote, and review list here shows the change.
	pushed := gitIn(w.remote, "rev-parse", "refs/heads/agent/ws-r")
	var items []struct {
		Task   struct{ ID, Status string } `json:"task"`
		Change *struct {
			Head, Remote, State string
		} `json:"change"`
		Files int `json:"files"`
	}
	if !poll.Until(fakemodel.Timeout, func() bool {
		code, out, _ := runCLI(t, w.root, w.env, "review", "list", "--json")
		return code == 0 && json.Unmarshal([]byte(out), &items) == nil && len(items) == 1 && items[0].Change != nil
	}) {
		t.Fatalf("review list does not show the change: %+v\n%s", items, w.host("ws-r").stderr.String())
	}
	if c := items[0].Change; items[0].Task.ID != id || c.Head != pushed || c.Remote != "origin" || c.State != "review" || items[0].Files != 1 {
		t.Fatalf("the change as review list shows it: %+v %+v (the remote's agent/ws-r is %s)", items[0], *c, pushed)
	}
	if code, out, _ := runCLI(t, w.root, w.env, "review", "show", id); code != 0 || !strings.Contains(out, "+hello") {
		t.Errorf("review show %s: exit %d\n%s", id, code, out)
	}

	// Landing happens here, the person's edit left as it is.
	fakemodel.WriteFile(t, filepath.Join(w.root, "notes.txt"), "notes\nmine, not committed\n")
	mine := hashOf(t, filepath.Join(w.root, "notes.txt"))
	if code, out, errOut := runCLI(t, w.root, w.env, "review", "approve", id); code != 0 {
		t.Fatalf("review approve: exit %d %s %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(w.root, "greeting.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("greeting.txt in the person's checkout: %q, %v", b, err)
	}
	if hashOf(t, filepath.Join(w.root, "notes.txt")) != mine || !strings.Contains(gitIn(w.root, "status", "--porcelain"), "notes.txt") {
		t.Error("the person's uncommitted edit changed, or was committed")
	}
	if got := gitIn(w.root, "log", "-1", "--format=%an|%s", "main"); got != "ws-r|"+id+": Write the greeting file" {
		t.Errorf("main's tip: %q", got)
	}
	code, out, _ = runCLI(t, w.root, w.env, "task", "show", id, "--json")
	if code != 0 || !strings.Contains(out, `"status": "DONE"`) {
		t.Errorf("task %s after landing: %s", id, out)
	}
}

func hashOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}
