package supervised

// With supervision.checkpoint_before_edit, a supervised run of the REAL
// claude or gemini CLI (against a scripted fake model that has it write a
// file with its own file tool) takes
// a checkpoint of the folder the CLI runs in once the edit is approved and
// before the CLI writes it. The agent's folder is a git repository of its
// own, not the workspace: the checkpoint must be of the tree the agent
// edits (a fleet agent's worktree).

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestCheckpointBeforeApprovedEdit(t *testing.T) {
	for _, c := range []struct {
		cli  string
		fake func(testing.TB, fakemodel.Script) *fakemodel.Server
		prep func(testing.TB, string) fakemodel.CLI
	}{
		{runner.CLIClaude, fakemodel.NewClaudeScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }},
		{runner.CLIGemini, fakemodel.NewGeminiScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }},
	} {
		t.Run(c.cli, func(t *testing.T) {
			if c.cli == runner.CLIGemini && os.Getenv("AGENTINFRA_E2E") != "1" {
				t.Skip("gemini's supervised runs take ~15 s each: AGENTINFRA_E2E=1 runs them")
			}
			t.Parallel()
			checkpointBeforeEdit(t, c.cli, c.fake, c.prep)
		})
	}
}

func checkpointBeforeEdit(t *testing.T, cliName string, newFake func(testing.TB, fakemodel.Script) *fakemodel.Server, prep func(testing.TB, string) fakemodel.CLI) {
	ctx := context.Background()
	root := t.TempDir()
	if _, err := tasksvc.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte("supervision:\n  checkpoint_before_edit: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}

	var target string
	fake := newFake(t, func(a fakemodel.Ask) fakemodel.Answer {
		if !a.ToolCall && strings.Contains(a.User, "WRITE-THE-NOTE") {
			return fakemodel.Answer{Write: &fakemodel.FileWrite{Path: target, Content: "written by the agent\n"}}
		}
		return fakemodel.Answer{Text: "done"}
	})
	cli := prep(t, fake.URL)
	// The agent's folder: a repository with nested tracked files.
	agentDir := cli.Dir
	if err := os.MkdirAll(filepath.Join(agentDir, "src", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(agentDir, "src", "pkg", "a.go"), []byte("package pkg\n"), 0o644)
	gitIn(t, agentDir, "init", "-q")
	gitIn(t, agentDir, "add", "-A")
	gitIn(t, agentDir, "commit", "-qm", "start")
	target = filepath.Join(agentDir, "notes", "new.txt")

	run, err := Begin(ctx, ws, Params{Owner: "ana", CLI: cliName, Title: "checkpoint test"})
	if err != nil {
		t.Fatal(err)
	}
	ses := run.Session()
	st := run.Store()
	// A person approves the edit from another store handle, as another
	// process would.
	decided := make(chan store.PendingView, 1)
	go func() {
		person, err := store.OpenWorkspace(ctx, ws, store.Options{})
		if err != nil {
			t.Error(err)
			decided <- store.PendingView{}
			return
		}
		defer person.Close()
		wctx, cancel := context.WithTimeout(ctx, fakemodel.Timeout)
		defer cancel()
		changes, _ := person.Changes(wctx)
		for {
			if p, _ := person.Pending(wctx); len(p) > 0 {
				if _, err := os.Stat(target); err == nil {
					t.Error("the file was written before anyone approved")
				}
				if _, err := person.Decide(wctx, store.Decision{RequestID: p[0].ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
					t.Error(err)
				}
				decided <- p[0]
				return
			}
			select {
			case <-wctx.Done():
				t.Error("no request became pending")
				decided <- store.PendingView{}
				return
			case <-changes:
			}
		}
	}()
	rn, err := agentcli.Runner(cliName)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, fakemodel.Timeout)
	defer cancel()
	res, err := run.Exec(rctx, rn, runner.Request{Prompt: "WRITE-THE-NOTE please", Model: cli.Model, Dir: agentDir, Env: cli.Env, CleanEnv: true,
		Binary: cli.Binary, ExtraArgs: cli.ExtraArgs}, runner.Command{}, nil)
	p := <-decided
	if err != nil {
		t.Fatalf("Exec: %v (%+v)", err, res)
	}
	if p.Kind != store.KindEdit || !strings.HasSuffix(p.File, "new.txt") {
		t.Fatalf("the request: %+v", p)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "written by the agent\n" {
		t.Fatalf("the approved write: %q %v", b, err)
	}

	// `agentinfra checkpoint list SESSION` reads these.
	cps, err := st.Checkpoints(ctx, ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Fatalf("checkpoints of session %d: %+v", ses.ID, cps)
	}
	c := cps[0]
	realAgent, _ := filepath.EvalSymlinks(agentDir)
	if c.Dir != realAgent || !strings.Contains(c.Label, "before request") || !strings.HasPrefix(c.Ref, checkpoint.RefPrefix) {
		t.Fatalf("the checkpoint is of %s (%q), want the agent's folder %s", c.Dir, c.Label, realAgent)
	}
	// Taken before the file changed: the new file is the one difference.
	changes, err := checkpoint.Diverged(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "notes/new.txt" || changes[0].Status != "added" {
		t.Fatalf("since the checkpoint: %+v", changes)
	}
	// Restoring it removes the edit.
	if _, err := checkpoint.Restore(ctx, st, c, checkpoint.RestoreOptions{Force: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("after restore the edit is still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(agentDir, "src", "pkg", "a.go")); string(b) != "package pkg\n" {
		t.Fatalf("restore changed a tracked file: %q", b)
	}
	if err := run.End(ctx, "test over"); err != nil {
		t.Fatal(err)
	}
}
