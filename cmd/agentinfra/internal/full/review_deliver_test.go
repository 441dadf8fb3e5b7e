package full

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// reviewPlanMatrix is one task for papi.
const reviewPlanMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|------|
| aaaa01 | TODO | P1 | easy | coder |  |  | Add the A function | 2026-11-01 | 2026-11-02 | - |
`

// The light binary cannot run the fleet: review changes hands the start
// over to agentinfra-full's agent deliver. An idle agent is started on the
// change at once, its prompt carrying every comment with its file and
// line; its run's end records the change again (REVIEW, round 2). With
// nothing waiting, agent deliver says so.
func TestCLIReviewChangesStartsTheIdleAgent(t *testing.T) {
	c := newFleetCLI(t)
	dir := t.TempDir()
	prompts := filepath.Join(dir, "prompts")
	os.MkdirAll(prompts, 0o755)
	plan, _ := json.Marshal([]map[string]any{
		{"agent": "papi", "when": "was reviewed", "write": map[string]string{"a.go": "package main\n\n// A does nothing yet.\nfunc A() {}\n"}},
		{"agent": "papi", "when": "aaaa01", "write": map[string]string{"a.go": "package main\n\nfunc A() {}\n"}},
	})
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	c.env = append(c.env, "STUB_PLAN="+planFile, "STUB_PROMPTS="+prompts)
	if err := os.WriteFile(filepath.Join(c.repo, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(reviewPlanMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	c.git("add", "-A")
	c.git("commit", "-q", "-m", "the task")

	if code, out, errOut := c.run("agent", "deliver"); code != 0 || !strings.Contains(out, "nothing waits for an agent") {
		t.Fatalf("agent deliver with nothing waiting: exit %d\n%s%s", code, out, errOut)
	}
	var created agentJSON
	c.json(&created, "agent", "create", "papi", "--spec", "work on the matrix")
	c.waitStatus("papi", "idle")
	if code, _, errOut := c.run("agent", "start", "papi", "--task", "aaaa01"); code != 0 {
		t.Fatalf("agent start --task: exit %d: %s", code, errOut)
	}
	round := func(n int) error {
		var items []struct {
			Change *struct {
				Round int `json:"round"`
			} `json:"change"`
		}
		c.json(&items, "review", "list")
		if len(items) != 1 || items[0].Change == nil || items[0].Change.Round != n {
			return fmt.Errorf("review list: %+v; want aaaa01 at round %d", items, n)
		}
		return nil
	}
	poll.EventuallyNil(t, func() error { return round(1) })
	c.waitStatus("papi", "idle")

	code, out, errOut := c.run("review", "changes", "aaaa01", "--comment", "say what A does", "--file", "a.go", "--line", "3")
	if code != 0 || !strings.Contains(out, "@papi started on it in run papi-") || !strings.Contains(out, "a.go:3: say what A does") {
		t.Fatalf("review changes to an idle agent: exit %d\n%s%s", code, out, errOut)
	}
	poll.EventuallyNil(t, func() error { return round(2) })
	b, err := os.ReadFile(filepath.Join(prompts, "papi.prompts"))
	if err != nil {
		t.Fatal(err)
	}
	ps := strings.Split(strings.TrimSuffix(string(b), "\n\x1e\n"), "\n\x1e\n")
	if last := ps[len(ps)-1]; !strings.Contains(last, "a.go:3: say what A does") {
		t.Errorf("papi's prompt after review changes:\n%s", last)
	}
	c.waitStatus("papi", "idle")
}
