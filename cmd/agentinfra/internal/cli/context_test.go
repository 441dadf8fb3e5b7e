package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ctxCLIWorkspace writes a small workspace: one task with a folder, README
// links, tracking notes and an artifact; a mode; one skill.
func ctxCLIWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".agent/DEVELOPMENT_MATRIX.md": "# Development Matrix\n\n" +
			"| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
			"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
			"| ab12cd | IN_PROGRESS | P1 | hard | coder | go-testing, gone | @ann | Add retry | 2026-11-10 | 2026-11-20 |\n" +
			"| ef34ab | TODO | P2 | med | | | | Write docs | 2026-11-11 | 2026-11-11 |\n" +
			"| 9a9a9a | DONE | P3 | easy | | | | Old work | 2026-11-01 | 2026-11-19 |\n",
		".agent/agents/coder.md":                      "You write code.\n",
		".agent/skills/go-testing/SKILL.md":           "---\nname: Go testing\ndescription: Table tests.\n---\n# Go testing\n\n## Rules\n\nUse t.TempDir.\n",
		".agent/tasks/ab12cd_retry/README.md":         "# Retry\n\nSee [the code](../../../src/a.go) and [the plan](plan.md).\n",
		".agent/tasks/ab12cd_retry/tracking/1.md":     "# Day 1\n\nStarted.\n",
		".agent/tasks/ab12cd_retry/tracking/2.md":     "# Day 2\n\nHalf done; next: wire it in.\n",
		".agent/tasks/ab12cd_retry/artifacts/out.txt": "result\n",
		"src/a.go": "package src\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCLITaskContext(t *testing.T) {
	root := ctxCLIWorkspace(t)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "context", "ab12cd", "--tracking", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"# Task ab12cd: Add retry",
		"- Task folder: .agent/tasks/ab12cd_retry/",
		"- Mode file: .agent/agents/coder.md",
		"[the code] -> src/a.go (file)",
		"[the plan] -> .agent/tasks/ab12cd_retry/plan.md (MISSING",
		"The last 1 of 2 files",
		"Half done; next: wire it in.",
		"- .agent/tasks/ab12cd_retry/artifacts/out.txt (7 bytes)",
		"- gone (named by the task): MISSING",
		"## Skill: Go testing (go-testing)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Started.") {
		t.Error("--tracking 1 still printed the older note")
	}
}

func TestCLITaskContextJSON(t *testing.T) {
	root := ctxCLIWorkspace(t)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "context", "ef34ab", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"artifacts", "links", "skills"} {
		if l, ok := v[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, v[k])
		}
	}
	if v["task_dir"] != "" || v["task"].(map[string]any)["id"] != "ef34ab" {
		t.Errorf("task/task_dir wrong: %v", v)
	}
}

func TestCLITaskContextErrors(t *testing.T) {
	root := ctxCLIWorkspace(t)
	code, _, errOut := runCLI(t, root, cliOpts{}, "task", "context", "ab12ce")
	if code != 3 || !strings.Contains(errOut, "did you mean ab12cd") {
		t.Errorf("unknown ID: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, root, cliOpts{}, "task", "context")
	if code != 2 {
		t.Errorf("missing ID: exit %d, want 2 (%s)", code, errOut)
	}
	code, _, _ = runCLI(t, root, cliOpts{}, "task", "context", "ab12cd", "--tracking", "-1")
	if code != 2 {
		t.Errorf("negative --tracking: exit %d, want 2", code)
	}
}
