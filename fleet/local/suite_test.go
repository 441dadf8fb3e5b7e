package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/workspace"
)

// localWorld is the local backend with real git worktrees and the stub
// agent CLI, whose runs last long enough to be seen busy.
type localWorld struct {
	ws *workspace.Workspace
	f  *local.Fleet
}

func (w *localWorld) Backend() fleet.Backend          { return w.f }
func (w *localWorld) Workspace() *workspace.Workspace { return w.ws }
func (w *localWorld) Step(testing.TB)                 { time.Sleep(20 * time.Millisecond) }

// AddRuns appends finished runs to the history as the supervisor does.
func (w *localWorld) AddRuns(t testing.TB, name string, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-x%d", name, i+2)
		now := time.Now().UTC()
		tr := fleet.TaskRun{ID: id, AgentName: name, Summary: "run", Status: fleet.RunCompleted, Source: fleet.SourceHuman,
			CreatedAt: now, StartedAt: &now, CompletedAt: &now}
		w.f.AddFinishedRun(t, tr)
		ids = append(ids, id)
	}
	return ids
}

// Unavailable creates an agent in a project whose folder is no git
// repository: its worktree cannot be made.
func (w *localWorld) Unavailable(t testing.TB) error {
	cfg := filepath.Join(w.ws.AgentDir(), "config.yaml")
	old, _ := os.ReadFile(cfg)
	broken := t.TempDir()
	if err := os.WriteFile(cfg, append(old, []byte(fmt.Sprintf("\nprojects:\n  - name: broken\n    path: %s\n", broken))...), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(cfg, old, 0o644)
	// A workspace reads its config once: the fleet of the next process sees the project.
	fresh, err := workspace.New(w.ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = local.NewTestFleet(t, fresh, "STUB_MODE=ok").Create(context.Background(), fleet.CreateInput{Name: "unlucky", Spec: "s", Project: "broken"})
	return err
}

func TestBackendSuiteLocal(t *testing.T) {
	fleettest.Run(t, func(t *testing.T) fleettest.World {
		ws := fleettest.NewRepo(t)
		return &localWorld{ws: ws, f: local.NewTestFleet(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=700")}
	})
}
