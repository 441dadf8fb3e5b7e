//go:build linux

package full

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
)

// agentListed is an agent as `agent list --json` prints it.
type agentListed struct {
	Name    string       `json:"name"`
	Status  string       `json:"status"`
	Waiting *sessionWait `json:"waiting"`
}

// papiListed is agent papi in `agent list --json`, and what it printed.
func papiListed(t *testing.T, dir string, env []string) (agentListed, string) {
	t.Helper()
	out, stderr, err := runIn(t, dir, env, "agent", "list", "--json")
	if err != nil {
		t.Fatalf("agent list --json: %v\n%s", err, stderr)
	}
	var list struct {
		Agents []agentListed `json:"agents"`
	}
	jsonOf(t, out, &list)
	for _, a := range list.Agents {
		if a.Name == "papi" {
			return a, out
		}
	}
	return agentListed{}, out
}

// A supervised fleet run of the real claude: while its request waits,
// `agent list --json` says papi is waiting, for that request; once it is
// approved, busy again (the model holds its next step back) with nothing
// waiting.
func TestFleetRunWaitingShowsInAgentList(t *testing.T) {
	c := attentionCLIs[0]
	e2etools.Bin(t, c.name) // skips without AGENTINFRA_E2E=1
	dir, _ := dispatchCLISetup(t)
	fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"),
		"# Add retry\n\nMARK-30: please run the commands you are given, in the current folder.\n\n## Status log\n\n")
	gitInitCommitted(t, dir)
	hold := make(chan struct{})
	var release sync.Once
	model := &steps{cmds: []string{"touch ok.txt", "touch two.txt"}, hold: map[int]chan struct{}{1: hold}}
	fake := c.fake(t, model.script)
	// Registered after the fake, so it runs before the fake's Close (cleanups
	// run last-in first-out): httptest's Close waits for the held handler.
	t.Cleanup(func() { release.Do(func() { close(hold) }) })
	cli := c.prep(t, fake.URL)
	env := append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	startPapiSupervised(t, dir, env)
	p := waitPending(t, dir, &syncBuffer{})
	id := fmt.Sprint(p.ID)
	until(t, "agent list --json says papi waits for request "+id, func() (bool, string) {
		a, out := papiListed(t, dir, env)
		return a.Status == "waiting" && a.Waiting != nil && a.Waiting.Kind == "request" && a.Waiting.Ref == id, out
	})
	if code, _, e := binIn(t, dir, env, "approve", id); code != 0 {
		t.Fatalf("approve: exit %d: %s", code, e)
	}
	until(t, "agent list --json says papi is busy again, nothing waiting", func() (bool, string) {
		a, out := papiListed(t, dir, env)
		return a.Status == "busy" && a.Waiting == nil, out
	})
}

// gitInitCommitted makes dir a repository with everything committed on
// main (the fleet makes its worktrees from it).
func gitInitCommitted(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// startPapiSupervised creates agent papi (claude; its warm-up run on its
// spec, idle after it) and starts it on task a1b2c3 supervised (approval
// mode ask); papi is stopped at the end of the test.
func startPapiSupervised(t *testing.T, dir string, env []string) {
	t.Helper()
	if _, stderr, err := runIn(t, dir, env, "agent", "create", "papi", "--cli", "claude", "--spec", "warm up"); err != nil {
		t.Fatalf("agent create: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { runIn(t, dir, env, "agent", "stop", "papi") })
	waitAgent(t, dir, env, "idle", "failed")
	if _, stderr, err := runIn(t, dir, env, "agent", "start", "papi", "--task", "a1b2c3", "--approval-mode", "ask"); err != nil {
		t.Fatalf("agent start: %v\n%s", err, stderr)
	}
}
