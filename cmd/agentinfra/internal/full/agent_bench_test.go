package full

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/workspace"
)

// BenchmarkAgentList50Process: the whole `agentinfra agent list` process
// over 50 idle agents (no metadata), start-up included (target: under 20 ms):
//
//	go test ./cmd/agentinfra/internal/full -run '^$' -bench AgentList50Process
func BenchmarkAgentList50Process(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "agentinfra")
	for dst, pkg := range map[string]string{bin: "github.com/agentinfra/agentinfra/cmd/agentinfra",
		filepath.Join(filepath.Dir(bin), "agentinfra-full"): "github.com/agentinfra/agentinfra/cmd/agentinfra/agentinfra-full"} {
		if out, err := exec.Command("go", "build", "-o", dst, pkg).CombinedOutput(); err != nil {
			b.Fatalf("build: %v\n%s", err, out)
		}
	}
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
	stub := filepath.Join(b.TempDir(), "gemini")
	if out, err := exec.Command("go", "build", "-o", stub, "../../../../internal/testing/agentstub/stub").CombinedOutput(); err != nil {
		b.Fatalf("build stub: %v\n%s", err, out)
	}
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
	for deadline := time.Now().Add(time.Minute); ; {
		if idle, _ := f.List(ctx, fleet.ListFilter{Status: "idle"}); len(idle) == 50 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the agents never became idle")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.ResetTimer()
	for b.Loop() {
		if out, err := exec.Command(bin, "--root", repo, "agent", "list").CombinedOutput(); err != nil {
			b.Fatalf("agent list: %v\n%s", err, out)
		}
	}
}
