package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// clock is the tests' time: a change recorded at it is 0 s old.
var clock = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// fixture is a repository as a person works in it: the main checkout on
// main with an initialized .agent/, and agents' worktrees made the way
// the fleet makes them (git worktree add -b agent/NAME).
type fixture struct {
	t    testing.TB
	root string // the main checkout, the workspace root
	ws   *workspace.Workspace
	svc  *Service
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root}
	f.git(root, "init", "-q", "-b", "main")
	f.git(root, "config", "user.name", "Ana Person")
	f.git(root, "config", "user.email", "ana@example.com")
	f.git(root, "config", "commit.gpgsign", "false")
	if _, err := task.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	f.write(root, "util.go", "package util\n\nfunc One() int { return 1 }\n\nfunc Two() int { return 2 }\n")
	f.write(root, "notes.txt", "notes\n")
	f.git(root, "add", "-A")
	f.git(root, "commit", "-q", "-m", "init")
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	f.ws = ws
	f.svc = New(ws, func() time.Time { return clock })
	return f
}

// git runs git in dir and returns its trimmed output.
func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) write(dir, rel, content string) {
	f.t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(dir, rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// agent makes NAME's worktree on agent/NAME from main, as the fleet does.
func (f *fixture) agent(name string) string {
	f.t.Helper()
	wt := filepath.Join(filepath.Dir(f.root), "repo-agents", name)
	f.git(f.root, "worktree", "add", "-q", "-b", "agent/"+name, wt, "main")
	return wt
}

// taskInReview makes a task that agent claimed and whose run ended
// completed (REVIEW), as the fleet's run end leaves it.
func (f *fixture) taskInReview(desc, agent string) string {
	f.t.Helper()
	ctx := context.Background()
	c, err := task.CreateTask(ctx, f.ws, task.CreateOptions{Description: desc, Mode: "coder"}, clock)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := task.Claim(ctx, f.ws, c.Task.ID, agent, clock); err != nil {
		f.t.Fatal(err)
	}
	if _, err := task.Finish(ctx, f.ws, c.Task.ID, task.FinishOptions{OK: true, Reason: "completed", Holder: "@" + agent}, task.AgentActor(agent), clock); err != nil {
		f.t.Fatal(err)
	}
	return c.Task.ID
}

// record records agent's change of task id, as the fleet's run end will.
func (f *fixture) record(id, agent, wt string) Change {
	f.t.Helper()
	c, err := f.svc.Record(context.Background(), RecordInput{Task: id, Agent: agent, Run: agent + "-1", Worktree: wt, Branch: "agent/" + agent, BaseBranch: "main", Summary: "did " + id})
	if err != nil {
		f.t.Fatalf("record %s: %v", id, err)
	}
	return c
}

// status is task id's status in the matrix.
func (f *fixture) status(id string) string {
	f.t.Helper()
	info, err := task.ShowTask(context.Background(), f.ws, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return info.Task.Status
}

func (f *fixture) readme(id string) string {
	f.t.Helper()
	info, err := task.ShowTask(context.Background(), f.ws, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return info.Readme
}

// config writes .agent/config.yaml and reopens the workspace (a process
// reads its config once).
func (f *fixture) config(yaml string) {
	f.t.Helper()
	f.write(f.root, ".agent/config.yaml", yaml)
	ws, err := workspace.New(f.root)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ws = ws
	f.svc = New(ws, func() time.Time { return clock })
}

// hashFiles is one hash over the named files' bytes in dir (a missing
// file hashes as missing).
func hashFiles(t testing.TB, dir string, rels ...string) string {
	t.Helper()
	h := sha256.New()
	for _, r := range rels {
		b, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			b = []byte("<missing>")
		}
		h.Write([]byte(r + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
