package dispatch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/runner"
)

// A dispatch leaves no process the agent started, even one in a session
// of its own (as gemini runs shell commands): not when the agent finished,
// not when the dispatch timed out. The run's log says what was killed.
func TestDispatchLeavesNoProcessOfTheAgent(t *testing.T) {
	bin := agentstub.Build(t)
	for _, c := range []struct {
		name string
		hang bool
	}{{"finished", false}, {"timed out", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := dispatchWorkspace(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			env := []string{"STUB_MODE=detach", "STUB_PIDFILE=" + pidFile}
			if c.hang {
				env = append(env, "STUB_HANG=1")
			}
			opts := stubOptions(bin, "a1a1a1", env...)
			opts.Timeout = 2 * time.Second
			out, err := Run(context.Background(), ws, opts, nil)
			if c.hang != errors.Is(err, runner.ErrTimedOut) {
				t.Fatalf("err = %v", err)
			}
			if pid := agentstub.ReadPid(t, pidFile); !agentstub.ProcessGone(pid) {
				t.Fatalf("the agent's detached process %d outlived the dispatch", pid)
			}
			items, err := agentrun.ReadLog(filepath.Join(ws.Root, out.LogFile))
			if err != nil || len(items) < 2 {
				t.Fatalf("log %s: %v, %v", out.LogFile, items, err)
			}
			if end := items[len(items)-1]; end.Kind != agentrun.ItemEnded || !strings.Contains(end.Text, "process(es) the agent left were killed") {
				t.Errorf("the log's end = %+v", end)
			}
			if out.RunID != "a1a1a1-20261121T123000Z" || out.Scope.Zero() || out.Caller != agentrun.CallerDispatch || out.Agent != "@coder" {
				t.Errorf("record: run %q scope %q caller %q agent %q", out.RunID, out.Scope.Token, out.Caller, out.Agent)
			}
		})
	}
}
