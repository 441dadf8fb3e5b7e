package mcpserver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/review"
)

// The review tool through the real fleet: a run on a matrix task ends in
// a change (list, show with git's diff), changes sends it back to the
// same agent with the comment on its file and line (its next prompt has
// it; its run's end records round 2), approve lands it on main, the task
// DONE. Bad calls are 400s naming the field, and change nothing.
func TestReviewToolThroughTheFleet(t *testing.T) {
	ws := fleetWorkspace(t, 1)
	id := loadTasks(t, ws)[0].ID
	dir := t.TempDir()
	plan, _ := json.Marshal([]map[string]any{
		{"agent": "papi", "when": "was reviewed", "write": map[string]string{"a.go": "package a\n\n// A does nothing yet.\nfunc A() {}\n"}},
		{"agent": "papi", "when": id, "write": map[string]string{"a.go": "package a\n\nfunc A() {}\n"}},
	})
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connectFleet(t, ws, []string{ToolsetFleet}, "STUB_MODE=ok", "STUB_PLAN="+planFile, "STUB_PROMPTS="+dir)
	fleetCall(t, cs, "create_agent", map[string]any{"name": "papi", "project": filepath.Base(ws.Root), "spec": "work the matrix"}, nil)
	waitAgent(t, cs, "papi", fleet.StatusIdle)
	fleetCall(t, cs, "start_agent_task", map[string]any{"agent_name": "papi", "task_id": id}, nil)

	var list struct {
		Changes []review.Item `json:"changes"`
	}
	atRound := func(n int) bool {
		fleetCall(t, cs, "review", map[string]any{"action": "list"}, &list)
		return len(list.Changes) == 1 && list.Changes[0].Change != nil && list.Changes[0].Change.Round == n
	}
	poll.Eventually(t, func() bool { return atRound(1) }, "the run's change in review list: %+v", &list)
	waitAgent(t, cs, "papi", fleet.StatusIdle)
	if it := list.Changes[0]; it.Files != 1 || it.Added != 3 || it.Change.Agent != "papi" || it.Checks != review.ChecksNone {
		t.Errorf("review list: %+v", it)
	}
	var shown ReviewShow
	fleetCall(t, cs, "review", map[string]any{"action": "show", "task_id": id}, &shown)
	if !strings.Contains(shown.Diff, "+func A() {}") || shown.Change == nil {
		t.Errorf("review show: %+v", shown)
	}

	wantFleetError(t, cs, "review", map[string]any{"action": "show"}, 400, "task_id")
	wantFleetError(t, cs, "review", map[string]any{"action": "merge", "task_id": id}, 400, "action")
	wantFleetError(t, cs, "review", map[string]any{"action": "changes", "task_id": id}, 400, "comments")
	wantFleetError(t, cs, "review", map[string]any{"action": "changes", "task_id": id, "comments": "fix it"}, 400, "comments")
	wantFleetError(t, cs, "review", map[string]any{"action": "approve", "task_id": id, "strategy": "octopus"}, 400, "strategy")

	var sent review.ChangesResult
	fleetCall(t, cs, "review", map[string]any{"action": "changes", "task_id": id,
		"comments": []map[string]any{{"text": "say what A does", "file": "a.go", "line": 3}}}, &sent)
	if sent.Delivery == nil || sent.Delivery.Run == "" || !strings.Contains(sent.Prompt, "a.go:3: say what A does") {
		t.Fatalf("review changes: delivery %+v, prompt %q", sent.Delivery, sent.Prompt)
	}
	poll.Eventually(t, func() bool { return atRound(2) }, "round 2 in review list: %+v", &list)
	waitAgent(t, cs, "papi", fleet.StatusIdle)
	b, _ := os.ReadFile(filepath.Join(dir, "papi.prompts"))
	ps := strings.Split(strings.TrimSuffix(string(b), "\n\x1e\n"), "\n\x1e\n")
	if !strings.Contains(ps[len(ps)-1], "a.go:3: say what A does") {
		t.Errorf("papi's last prompt:\n%s", ps[len(ps)-1])
	}

	var landed review.ApproveResult
	fleetCall(t, cs, "review", map[string]any{"action": "approve", "task_id": id}, &landed)
	if landed.Task.Status != "DONE" || landed.Change.Landed == nil {
		t.Fatalf("review approve: %+v", landed)
	}
	out, err := exec.Command("git", "-C", ws.Root, "show", "main:a.go").Output()
	if err != nil || !strings.Contains(string(out), "A does nothing yet") {
		t.Errorf("main's a.go after approve: %v %s", err, out)
	}
}
