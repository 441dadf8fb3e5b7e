package supervised

// A supervised run of the REAL claude, codex and gemini, with their homes
// and folders outside the temporary ones (where a user's are): an approved
// shell command that writes outside the run's folder is denied by Landlock
// and leaves no file; it cannot read the workspace's supervision database;
// writes in the run's folder (the shell's, the CLI's own file tool's)
// succeed, and the CLI itself runs with its state where it keeps it.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSupervisedRunIsContained(t *testing.T) {
	if s := contain.Supported(); s.ABI == 0 {
		t.Skipf("no Landlock here: %s", s.Why)
	}
	for _, c := range []struct {
		cli  string
		fake func(testing.TB, fakemodel.Script) *fakemodel.Server
		prep func(testing.TB, string) fakemodel.CLI
	}{
		{runner.CLIClaude, fakemodel.NewClaudeScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }},
		{runner.CLICodex, fakemodel.NewCodexScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Codex(t, u) }},
		{runner.CLIGemini, fakemodel.NewGeminiScript, func(t testing.TB, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }},
	} {
		t.Run(c.cli, func(t *testing.T) {
			containedRun(t, c.cli, c.fake, c.prep)
		})
	}
}

// relocate moves the CLI's prepared home to home, as a user's would be,
// and drops what points the CLI's state at temporary folders (TMPDIR, and
// claude's CLAUDE_CONFIG_DIR: claude then keeps ~/.claude.json in ~).
func relocate(t *testing.T, cli *fakemodel.CLI, home string) {
	t.Helper()
	if err := os.Rename(cli.Home, home); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range cli.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMPDIR" || k == "CLAUDE_CONFIG_DIR" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, strings.ReplaceAll(kv, cli.Home, home))
	}
	cli.Env = env
	for i, a := range cli.ExtraArgs {
		cli.ExtraArgs[i] = strings.ReplaceAll(a, cli.Home, home)
	}
	cli.Home = home
}

func containedRun(t *testing.T, cliName string, newFake func(testing.TB, fakemodel.Script) *fakemodel.Server, prep func(testing.TB, string) fakemodel.CLI) {
	ctx := context.Background()
	base := e2etools.OutsideTemp(t)
	root, work, outside := filepath.Join(base, "ws"), filepath.Join(base, "work"), filepath.Join(base, "outside")
	for _, d := range []string{root, work, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tasksvc.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	db := store.PathIn(ws)
	written := filepath.Join(work, "notes", "written.txt")

	var mu sync.Mutex
	var seen string // the shell command's result, as the model saw it
	wrote := false
	shell := "echo escaped > " + filepath.Join(outside, "escaped.txt") + "; head -c 16 " + db + "; echo inside > inside.txt"
	fake := newFake(t, func(a fakemodel.Ask) fakemodel.Answer {
		mu.Lock()
		defer mu.Unlock()
		if !a.ToolCall {
			if strings.Contains(a.User, "TRY-TO-ESCAPE") {
				return fakemodel.Answer{Shell: shell}
			}
			return fakemodel.Answer{Text: "done"}
		}
		if seen == "" {
			seen = a.ToolResult
		}
		if wrote || cliName == runner.CLICodex { // codex has no file tool of its own in this fake
			return fakemodel.Answer{Text: "done"}
		}
		wrote = true
		return fakemodel.Answer{Write: &fakemodel.FileWrite{Path: written, Content: "written by the agent\n"}}
	})
	cli := prep(t, fake.URL)
	relocate(t, &cli, filepath.Join(base, "home"))

	run, err := Begin(ctx, ws, Params{Owner: "ana", CLI: cliName, Title: "containment"})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, fakemodel.Timeout)
	defer cancel()
	go approveEverything(rctx, t, ws, run.Session().ID)
	rn, _ := agentcli.Runner(cliName)
	res, err := run.Exec(rctx, rn, runner.Request{Prompt: "TRY-TO-ESCAPE please", Model: cli.Model, Dir: work, Env: cli.Env, CleanEnv: true,
		Binary: cli.Binary, ExtraArgs: cli.ExtraArgs}, runner.Command{}, nil)
	run.End(ctx, "test over")
	if err != nil {
		t.Fatalf("the contained run failed: %v (%+v)", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the approved command wrote outside the run's folder (%v); the tool said:\n%s", err, seen)
	}
	if !strings.Contains(seen, "ermission denied") {
		t.Errorf("the tool result does not say the writes were denied:\n%s", seen)
	}
	if strings.Contains(seen, "SQLite format") {
		t.Errorf("the agent read the supervision database:\n%s", seen)
	}
	if b, err := os.ReadFile(filepath.Join(work, "inside.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("the shell's write inside the run's folder: %q %v; the tool said:\n%s", b, err, seen)
	}
	if cliName != runner.CLICodex {
		if b, err := os.ReadFile(written); err != nil || string(b) != "written by the agent\n" {
			t.Errorf("the CLI's own write inside the run's folder: %q %v", b, err)
		}
	}
}

// approveEverything approves each request of the session as it comes, as
// a person at another terminal would.
func approveEverything(ctx context.Context, t *testing.T, ws *workspace.Workspace, session int64) {
	person, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Error(err)
		return
	}
	defer person.Close()
	changes, _ := person.Changes(ctx)
	for {
		pending, _ := person.Pending(ctx)
		for _, p := range pending {
			if p.SessionID == session {
				person.Decide(ctx, store.Decision{RequestID: p.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
	}
}
