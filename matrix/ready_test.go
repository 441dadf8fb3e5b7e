package matrix

import (
	"strings"
	"testing"
)

// A matrix as people write one: uneven padding, a Deps column with spaces
// and dashes, one dependency on a typo'd ID, a cycle.
const depsMatrix = `# Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|---|---|---|---|---|---|---|---|---|---|---|
| a1a1a1 | DONE | P2 | easy | coder | | | Parser | 2026-11-01 | 2026-11-02 | - |
| b2b2b2 | TODO | P2 | med | coder | | | Uses the parser | 2026-11-01 | 2026-11-02 | a1a1a1 |
| c3c3c3 |TODO| P1 | med | coder | | | Waits for b2 | 2026-11-01 | 2026-11-02 |a1a1a1,  b2b2b2|
| d4d4d4 | TODO | P0 | hard | explorer | | | No deps | 2026-11-01 | 2026-11-02 |  |
| e5e5e5 | TODO | P1 | easy | coder | | | Typo dep | 2026-11-01 | 2026-11-02 | a1a1a2 |
| f6f6f6 | TODO | P3 | easy | coder | | | Cycle one | 2026-11-01 | 2026-11-02 | a7a7a7 |
| a7a7a7 | TODO | P3 | easy | coder | | | Cycle two | 2026-11-01 | 2026-11-02 | f6f6f6 |
`

func TestReadyTasksAndQuery(t *testing.T) {
	d := Parse([]byte(depsMatrix))
	var ids []string
	for _, r := range ReadyTasks(d.Tasks(), d.Vocabulary()) {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "d4d4d4 b2b2b2" {
		t.Fatalf("ready = %s, want d4d4d4 (P0) then b2b2b2", got)
	}
	// Query.Ready keeps file order and works with filters that let the
	// prefilter drop rows (the deps' statuses still count).
	got, _ := Query{Ready: true, Mode: "coder"}.SelectWithProblems([]byte(depsMatrix), nil)
	if len(got) != 1 || got[0].ID != "b2b2b2" {
		t.Fatalf("ready coder tasks = %v", got)
	}
	got, _ = Query{Ready: true}.SelectWithProblems([]byte(depsMatrix), nil)
	if len(got) != 2 || got[0].ID != "b2b2b2" || got[1].ID != "d4d4d4" {
		t.Fatalf("ready tasks in file order = %v", got)
	}
}

func TestDependencyDiagnostics(t *testing.T) {
	d := Parse([]byte(depsMatrix))
	diags := d.DependencyDiagnostics()
	var msgs []string
	for _, dg := range diags {
		if dg.Severity != SeverityError {
			t.Errorf("%v is not an error", dg)
		}
		msgs = append(msgs, dg.Message)
	}
	all := strings.Join(msgs, "\n")
	if len(diags) != 2 || !strings.Contains(all, "e5e5e5 depends on a1a1a2, which is no task ID") ||
		!strings.Contains(all, "dependency cycle: f6f6f6 → a7a7a7 → f6f6f6") {
		t.Fatalf("diagnostics:\n%s", all)
	}
	if diags[0].Line != 9 && diags[1].Line != 9 {
		t.Errorf("the unknown ID is not reported on e5e5e5's line: %+v", diags)
	}
	if got := Validate(d, "m.md"); len(got) != 2 {
		t.Fatalf("validate reports %d problems, want the 2 dependency errors: %v", len(got), got)
	}
	if d := Parse([]byte(strings.ReplaceAll(depsMatrix, " Deps |", " Notes |"))); len(d.DependencyDiagnostics()) != 0 {
		t.Fatal("a matrix without a Deps column has dependency problems")
	}
}
