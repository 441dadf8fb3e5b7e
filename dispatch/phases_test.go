package dispatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// The phases of a dispatch, tested without starting a process.

func TestNewPlanDecidesEverythingAndWritesNothing(t *testing.T) {
	ws := dispatchWorkspace(t)
	unchanged := treehash.Guard(t, ws.Root)
	opts := stubOptions("/bin/true", "a1a1a1")
	opts.Mode = "oracle"
	p, err := NewPlan(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	unchanged()
	if p.Outcome.Outcome != "" || p.Task.Status != "TODO" || p.Mention != "@oracle" {
		t.Errorf("outcome %q, task status %s, mention %s", p.Outcome.Outcome, p.Task.Status, p.Mention)
	}
	// The prompt shows the row as the claim will leave it.
	if p.Claimed.Status != "IN_PROGRESS" || strings.Join(p.Claimed.Agents, " ") != "@alice @oracle" {
		t.Errorf("claimed row: %s %v", p.Claimed.Status, p.Claimed.Agents)
	}
	if !strings.Contains(p.Prompt.Text, "- Status: IN_PROGRESS\n") || !strings.Contains(p.Prompt.Text, "- Agents: @alice, @oracle\n") {
		t.Errorf("the prompt does not show the claimed row:\n%s", p.Prompt.Text)
	}
	// The command that runs is the one recorded: built once, holding this prompt.
	if p.Command.PromptArg < 0 || p.Command.Argv[p.Command.PromptArg] != "--prompt="+p.Prompt.Text {
		t.Errorf("the command does not carry the planned prompt: %q", p.Command.Argv)
	}
	if strings.Join(p.Outcome.Argv, " ") != strings.Join(redacted(p), " ") || p.Outcome.Prompt != p.Prompt.Text {
		t.Errorf("the outcome does not describe the planned command: %q", p.Outcome.Argv)
	}
}

func redacted(p *Plan) []string {
	out := append([]string{}, p.Command.Argv...)
	out[p.Command.PromptArg] = p.Outcome.Argv[p.Command.PromptArg]
	return out
}

func TestClaimIsACompareAndSet(t *testing.T) {
	ws := dispatchWorkspace(t)
	first, err := NewPlan(context.Background(), ws, stubOptions("/bin/true", "a1a1a1"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewPlan(context.Background(), ws, stubOptions("/bin/true", "a1a1a1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Claim(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := taskOf(t, ws, "a1a1a1").Status; st != "IN_PROGRESS" || first.Outcome.StatusBefore != "TODO" {
		t.Errorf("after the claim: %s (before %s)", st, first.Outcome.StatusBefore)
	}
	// The second plan was made while the task was TODO: its claim is refused
	// under the lock, and the matrix keeps the first claim.
	before := readMatrix(t, ws)
	if err := second.Claim(context.Background()); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "@coder") {
		t.Errorf("second claim: err = %v, want a refusal naming the holder", err)
	}
	checkMatrix(t, before, readMatrix(t, ws), "")
}

func TestClaimRebuildsThePromptWhenTheRowChangedSinceThePlan(t *testing.T) {
	ws := dispatchWorkspace(t)
	p, err := NewPlan(context.Background(), ws, stubOptions("/bin/true", "a1a1a1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasksvc.UpdateTask(context.Background(), ws, "a1a1a1", matrix.Update{Priority: matrix.Str("P3")}, fixedNow, tasksvc.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.Claim(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Prompt.Text, "- Priority: P3\n") || p.Command.Argv[p.Command.PromptArg] != "--prompt="+p.Prompt.Text {
		t.Errorf("the prompt or command still shows the planned row:\n%s", p.Prompt.Text)
	}
}

// A dispatched task's README status log gets both transitions, written by
// the same code as `task update`, and the prompt the agent gets says
// IN_PROGRESS, as the row does while it runs.
func TestRunLogsBothTransitionsAndSendsTheClaimedStatus(t *testing.T) {
	bin := agentstub.Build(t)
	ws := dispatchWorkspace(t)
	created, err := tasksvc.CreateTask(context.Background(), ws, tasksvc.CreateOptions{
		Description: "Add a retry budget", Mode: "coder", Difficulty: "easy"}, fixedNow.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	task, dir := created.Task, created.Dir
	argsFile := filepath.Join(t.TempDir(), "args")
	out, err := Run(context.Background(), ws, stubOptions(bin, task.ID, "STUB_MODE=ok", "STUB_ARGSFILE="+argsFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- 2026-11-21 12:30: status TODO → IN_PROGRESS by @coder\n", "- 2026-11-21 12:30: status IN_PROGRESS → REVIEW by @coder: completed\n"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the README's status log lacks %q:\n%s", want, readme)
		}
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(args), "- Status: IN_PROGRESS\n") || strings.Contains(string(args), "- Status: TODO") {
		t.Errorf("the prompt the agent got does not say IN_PROGRESS:\n%s", args)
	}
	if !strings.Contains(out.Prompt, "- Agents: @coder\n") {
		t.Errorf("the prompt does not name the claiming agent:\n%s", out.Prompt)
	}
	// easy → the fast tier, although the coder mode is the starter one.
	if !strings.Contains(out.ModelReason, "difficulty easy → fast") {
		t.Errorf("model reason %q", out.ModelReason)
	}
}
