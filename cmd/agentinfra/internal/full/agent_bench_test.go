package full

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/internal/testing/testbin"
	"github.com/agentinfra/agentinfra/workspace"
)

// BenchmarkAgentList50Process: the whole `agentinfra agent list` process
// over 50 idle agents (no metadata), start-up included (target: under 20 ms):
//
//	go test ./cmd/agentinfra/internal/full -run '^$' -bench AgentList50Process
func BenchmarkAgentList50Process(b *testing.B) {
	bin := testbin.Path(b, testbin.Agentinfra)
	repo := filepath.Join(b.TempDir(), "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "config", "user.email", "t@example.com"},
		{"-C", repo, "config", "user.name", "T"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.Command(bin, "--root", repo, "init").CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"-C", repo, "add", "-A"}, {"-C", repo, "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	stub := agentstub.Named(b, "gemini")
	ws, err := workspace.New(repo)
	if err != nil {
		b.Fatal(err)
	}
	f := local.New(ws, local.Options{SupervisorArgv: []string{bin, "agent", "run-supervisor"}, Binary: stub, Env: []string{"STUB_MODE=ok"}})
	ctx := context.Background()
	for i := range 50 {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: fmt.Sprintf("a%d", i), Spec: "s"}); err != nil {
			b.Fatal(err)
		}
	}
	poll.Eventually(b, func() bool {
		idle, _ := f.List(ctx, fleet.ListFilter{Status: "idle"})
		return len(idle) == 50
	}, "the agents never became idle")
	b.ResetTimer()
	for b.Loop() {
		if out, err := exec.Command(bin, "--root", repo, "agent", "list").CombinedOutput(); err != nil {
			b.Fatalf("agent list: %v\n%s", err, out)
		}
	}
}
