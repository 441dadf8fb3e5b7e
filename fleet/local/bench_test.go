package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
)

// BenchmarkList50Agents: List over 50 idle agents (no metadata), the work
// of `agent list` and list_agents after start-up.
func BenchmarkList50Agents(b *testing.B) {
	ws := newRepo(b)
	f := testFleet(b, ws)
	if err := f.p.ensure(); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range 50 {
		name := fmt.Sprintf("agent-%d", i)
		a := &agentRecord{Name: name, Role: "coder", Project: "repo", Spec: "s", CLI: "gemini", CreatedAt: now, UpdatedAt: now,
			Workspace: fleet.Workspace{ID: "/x/" + name, Path: "/x/" + name, Branch: "agent/" + name}, State: stateReady}
		if err := mkdirWrite(f.p.file(name, agentFile), a); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		as, err := f.List(ctx, fleet.ListFilter{})
		if err != nil || len(as) != 50 {
			b.Fatal(len(as), err)
		}
	}
}

// BenchmarkStartToBusyVisible: from Start until Show says busy (the
// supervisor started and recorded the agent CLI's process).
func BenchmarkStartToBusyVisible(b *testing.B) {
	ws := newRepo(b)
	ctx := context.Background()
	f := testFleet(b, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=150")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "bench", Spec: "s"}); err != nil {
		b.Fatal(err)
	}
	waitStatus(b, f, "bench", fleet.StatusIdle)
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Start(ctx, fleet.StartInput{Name: "bench", Text: "go"}); err != nil {
			b.Fatal(err)
		}
		for {
			a, err := f.Show(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if a.Status == fleet.StatusBusy {
				break
			}
			if a.Status == fleet.StatusIdle {
				b.Fatal("the run ended before busy was seen")
			}
		}
		b.StopTimer()
		waitStatus(b, f, "bench", fleet.StatusIdle)
		b.StartTimer()
	}
}

func mkdirWrite(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return statefile.WriteJSON(path, v)
}
