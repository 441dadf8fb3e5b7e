package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// metadataFleet is a fleet of n ready agents whose worktrees hold taskfile,
// collected by the real go-task with timeout and no cache (every call
// collects afresh).
func metadataFleet(b *testing.B, n int, taskfile string, timeout time.Duration) *Fleet {
	b.Helper()
	bin := e2etools.GoBin(b, "task")
	ws := newRepo(b)
	f := New(ws, Options{Metadata: metadata.NewCollector(metadata.Options{TaskBinary: bin, Timeout: timeout, CacheTTL: -1})})
	if err := f.p.ensure(); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range n {
		name := fmt.Sprintf("agent-%d", i)
		wt := filepath.Join(b.TempDir(), name)
		if err := os.MkdirAll(wt, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "Taskfile.yml"), []byte(taskfile), 0o644); err != nil {
			b.Fatal(err)
		}
		a := &agentRecord{Name: name, Role: "coder", Project: "repo", Spec: "s", CLI: "gemini", CreatedAt: now, UpdatedAt: now,
			Workspace: fleet.Workspace{ID: wt, Path: wt, Branch: "agent/" + name}, State: stateReady}
		if err := mkdirWrite(f.p.file(name, agentFile), a); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// BenchmarkListMetadata10Agents4SlowFields: list_agents' work (List, then
// WithMetadata) over 10 agents whose Taskfiles have 4 fields of 1 s each
// (`sleep 1`). Collected one after another that is 40 s; the target is well
// under 2 s. child-cpu-s/op is the CPU the 40 go-task processes and their
// commands used: on N cores a list cannot take less than 1 s plus that / N;
// self-cpu-s/op is this process's (List, the collector, starting the 40).
func BenchmarkListMetadata10Agents4SlowFields(b *testing.B) {
	taskfile := "version: '3'\ntasks:\n"
	for i := range 4 {
		taskfile += fmt.Sprintf("  field_%d:\n    desc: One second.\n    meta: { include_in_list: true }\n    cmds: [sleep 1, echo v%d]\n", i, i)
	}
	f := metadataFleet(b, 10, taskfile, 0)
	ctx := context.Background()
	cpu0, self0 := childrenCPU(), selfCPU()
	b.ResetTimer()
	for b.Loop() {
		as, err := f.List(ctx, fleet.ListFilter{})
		if err != nil || len(as) != 10 {
			b.Fatal(len(as), err)
		}
		f.WithMetadata(ctx, as, metadata.ListFields)
		for _, a := range as {
			if s := a.Summary(); *s.MetadataCount != 4 || len(s.Metadata) != 4 || s.Metadata["field_3"] == nil || *s.Metadata["field_3"] != "v3" {
				b.Fatalf("%s: %+v", a.Name, a.Metadata)
			}
		}
	}
	b.ReportMetric((childrenCPU()-cpu0).Seconds()/float64(b.N), "child-cpu-s/op")
	b.ReportMetric((selfCPU()-self0).Seconds()/float64(b.N), "self-cpu-s/op")
}

// BenchmarkShowMetadataHangingField: show_agent's work on one agent with
// a quick field and one that hangs (sleep 60) under the default 5 s
// timeout: about 5 s, not more.
func BenchmarkShowMetadataHangingField(b *testing.B) {
	taskfile := "version: '3'\ntasks:\n  quick:\n    meta: {}\n    cmds: [echo ok]\n  hangs:\n    meta: {}\n    cmds: [sleep 60]\n"
	f := metadataFleet(b, 1, taskfile, metadata.DefaultTimeout)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		a, err := f.Show(ctx, "agent-0")
		if err != nil {
			b.Fatal(err)
		}
		as := []fleet.Agent{a}
		f.WithMetadata(ctx, as, metadata.AllFields)
		if q, h := as[0].Metadata["quick"], as[0].Metadata["hangs"]; q.Value == nil || h.Error == nil {
			b.Fatalf("quick %+v, hangs %+v", q, h)
		}
	}
}
