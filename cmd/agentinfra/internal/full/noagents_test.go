package full

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
)

// noAgentsMatrix is the shape of this workflow's author's own matrices: no
// Agents (nor Skills) column (issue 19, item 7).
const noAgentsMatrix = "# Development Matrix\n\n| ID | Status | Pri | Diff | Mode | Description | Created | Updated |\n" +
	"|----|--------|-----|------|------|-------------|---------|---------|\n" +
	"| 260121185711 | TODO | P1 | easy | coder | First. | 2026-01-21 | 2026-01-21 |\n" +
	"| 260121185712 | TODO | P2 | easy | coder | Second. | 2026-01-21 | 2026-01-21 |\n" +
	"| 260121185713 | DONE | P2 | easy | coder | Done already. | 2026-01-21 | 2026-01-21 |\n"

func readmeOf(t *testing.T, root, id string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(root, ".agent", "tasks", id+"_*", "README.md"))
	if len(m) != 1 {
		t.Fatalf("task %s: READMEs %v", id, m)
	}
	return readText(t, m[0])
}

// Claim, update --agent and dispatch --dry-run work on a matrix without an
// Agents column: the holder is recorded in the task README (a folder is
// made for it) and shown; migrate --add-columns adds the column, previewed
// first, and moves the holder into it.
func TestClaimWithoutAgentsColumn(t *testing.T) {
	root := newValidateWorkspace(t, noAgentsMatrix)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "claim", "260121185711", "--agent", "@alice")
	if code != 0 || out != "claimed 260121185711 for @alice: status TODO → IN_PROGRESS\n" {
		t.Fatalf("claim: exit %d %q %q", code, out, errOut)
	}
	if !strings.Contains(readmeOf(t, root, "260121185711"), ": status TODO → IN_PROGRESS by @alice: claimed by @alice\n") {
		t.Errorf("README:\n%s", readmeOf(t, root, "260121185711"))
	}
	if code, out, _ := runCLI(t, root, cliOpts{}, "task", "claim", "260121185711", "--agent", "alice"); code != 0 || out != "260121185711: already IN_PROGRESS, held by @alice\n" {
		t.Errorf("claim again by the holder: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "claim", "260121185711", "--agent", "@bob"); code != 4 || errOut != "error: task 260121185711 is IN_PROGRESS, held by @alice\n" {
		t.Errorf("claim by another: %d %q", code, errOut)
	}
	// A refused claim (DONE) makes no folder.
	if code, _, _ := runCLI(t, root, cliOpts{}, "task", "claim", "260121185713", "--agent", "@bob"); code != 4 { // conflict
		t.Errorf("claim of a DONE task: exit %d", code)
	}
	if m, _ := filepath.Glob(filepath.Join(root, ".agent", "tasks", "260121185713_*")); len(m) != 0 {
		t.Errorf("a refused claim made %v", m)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "show", "260121185711")
	if code != 0 || !strings.Contains(out, "Agents:       @alice (holder, from the task README's status log: the matrix has no Agents column)\n") {
		t.Errorf("show:\n%s", out)
	}
	var js struct{ Holder string }
	_, out, _ = runCLI(t, root, cliOpts{}, "task", "show", "260121185711", "--json")
	if err := json.Unmarshal([]byte(out), &js); err != nil || js.Holder != "@alice" {
		t.Errorf("show --json holder %q (%v)", js.Holder, err)
	}
	// update --agent records the mention; no "--set column" error.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "update", "260121185712", "--agent", "@carol")
	if code != 0 || !strings.Contains(out, "@carol named as an agent (the matrix has no Agents column)") || strings.Contains(errOut, "--set") {
		t.Errorf("update --agent: %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, root, cliOpts{Env: map[string]string{"PATH": ""}}, "dispatch", "260121185712", "--dry-run")
	if code > 1 || !strings.Contains(out, "would set: TODO → IN_PROGRESS") || strings.Contains(errOut, "--set") {
		t.Errorf("dispatch --dry-run: %d\n%s\n%s", code, out, errOut)
	}
	// migrate --add-columns: previewed, then made; the holder moves into it.
	before := matrixOf(t, root)
	code, diff, errOut := runCLI(t, root, cliOpts{}, "migrate", "--add-columns", "--dry-run")
	if code != 0 || !strings.Contains(diff, "+| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n") ||
		!strings.Contains(errOut, "would add Skills, Agents to the task table at line 3") || matrixOf(t, root) != before {
		t.Fatalf("--add-columns --dry-run: %d\n%s\n%s", code, diff, errOut)
	}
	if got := gitApply(t, before, diff); got == "" {
		t.Fatal("the dry run's diff does not apply")
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "migrate", "--add-columns"); code != 0 {
		t.Fatalf("--add-columns: %d %s", code, errOut)
	}
	if got, want := matrixOf(t, root), gitApply(t, before, diff); got != want {
		t.Errorf("--add-columns wrote\n%s\nthe dry run showed\n%s", got, want)
	}
	d := matrix.Parse([]byte(matrixOf(t, root)))
	if tk, _ := d.Task("260121185711"); strings.Join(tk.Agents, " ") != "@alice" {
		t.Errorf("after --add-columns: %+v", tk)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "claim", "260121185711", "--agent", "@bob"); code != 4 || !strings.Contains(errOut, "held by @alice") {
		t.Errorf("claim after the column was added: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "migrate", "--add-columns"); code != 0 || !strings.Contains(errOut, "nothing to add") {
		t.Errorf("again: %d %q", code, errOut)
	}
}

// Of many processes claiming one task of a matrix without an Agents column
// (and no folder yet) at once, exactly one wins, and the README names it.
func TestCLIConcurrentClaimWithoutAgentsColumn(t *testing.T) {
	const n = 10
	bin := taskBinary(t)
	root := newValidateWorkspace(t, noAgentsMatrix)
	ctx := context.Background()
	type result struct {
		agent, out, stderr string
		code               int
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("@agent-%02d", i)
			<-start
			cmd := exec.CommandContext(ctx, bin, "task", "claim", "260121185712", "--agent", agent)
			cmd.Env = append(os.Environ(), "AGENTINFRA_ROOT="+root, "NO_COLOR=1", "AGENTINFRA_LOCK_TIMEOUT=60s")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, _ := cmd.Output()
			results <- result{agent, string(out), stderr.String(), cmd.ProcessState.ExitCode()}
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	var winners []string
	var refused []result
	for r := range results {
		switch r.code {
		case 0:
			winners = append(winners, r.agent)
		case 4: // conflict: another agent holds it
			refused = append(refused, r)
		default:
			t.Errorf("%s: exit %d, stderr %q", r.agent, r.code, r.stderr)
		}
	}
	if len(winners) != 1 || len(refused) != n-1 {
		t.Fatalf("winners %v, %d refused; want one winner", winners, len(refused))
	}
	for _, r := range refused {
		if want := "error: task 260121185712 is IN_PROGRESS, held by " + winners[0] + "\n"; r.stderr != want {
			t.Errorf("%s: stderr %q, want %q", r.agent, r.stderr, want)
		}
	}
	readme := readmeOf(t, root, "260121185712")
	if strings.Count(readme, "claimed by") != 1 || !strings.Contains(readme, "claimed by "+winners[0]+"\n") {
		t.Errorf("README:\n%s", readme)
	}
}
