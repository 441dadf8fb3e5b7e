package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
)

// runCLI runs the built agentinfra in root and returns its stdout; exit codes
// in okCodes are not failures (validate exits 1 when it finds errors).
func runCLI(t *testing.T, root string, okCodes []int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(agentinfraBin(t), args...)
	cmd.Dir = root
	cmd.Env = append(serveEnv(), "AGENTINFRA_ROOT="+root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && containsInt(okCodes, ee.ExitCode())) {
		t.Fatalf("agentinfra %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// task show gives what `agentinfra task show --json` gives: the row, the
// folder (in tasks/ or archive/) and the README.
func TestTaskShowMatchesCLI(t *testing.T) {
	ws := newWorkspace(t, 2)
	_, cs := connect(t, ws, nil)
	id := loadTasks(t, ws)[1].ID
	dir, _ := ws.FindTaskDir(id)
	readme := "# Retry the fetcher\n\nBack off 3 times.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}

	check := func(wantArchived bool) {
		t.Helper()
		var out TaskOutput
		res := callOK(t, cs, "task", map[string]any{"action": "show", "id": id}, &out)
		var cli struct {
			Task     matrix.Task `json:"task"`
			Dir      string      `json:"dir"`
			Archived bool        `json:"archived"`
			Readme   string      `json:"readme"`
		}
		if err := json.Unmarshal(runCLI(t, ws.Root, nil, "task", "show", id, "--json"), &cli); err != nil {
			t.Fatal(err)
		}
		if out.Task == nil || !jsonEqual(*out.Task, cli.Task) || out.Dir != cli.Dir || out.Archived != cli.Archived || out.Readme != cli.Readme {
			t.Errorf("MCP show = %+v (dir %q, archived %v)\nCLI show = %+v (dir %q, archived %v)",
				out.Task, out.Dir, out.Archived, cli.Task, cli.Dir, cli.Archived)
		}
		if out.Readme != readme || out.Archived != wantArchived {
			t.Errorf("readme %q archived %v; want %q, %v", out.Readme, out.Archived, readme, wantArchived)
		}
		if !strings.Contains(text(res), "Back off 3 times.") || !strings.Contains(text(res), out.Dir) {
			t.Errorf("show text lacks the README or the folder:\n%s", text(res))
		}
	}
	check(false)
	callOK(t, cs, "task", map[string]any{"action": "update", "id": id, "status": "DONE"}, nil)
	callOK(t, cs, "task", map[string]any{"action": "archive", "id": id}, nil)
	check(true)

	before := treeHash(t, ws.Root)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "show"}, "id: required for action show"},
		{map[string]any{"action": "show", "id": id[:5] + "z"}, "id: no task \"" + id[:5] + "z\"; did you mean " + id + "?"},
		{map[string]any{"action": "show", "id": id, "status": "DONE"}, "status: not used by action show"},
	} {
		res := call(t, cs, "task", c.args)
		if !res.IsError || !strings.HasPrefix(errMessage(t, res), c.want) {
			t.Errorf("%v: got %q, want an error starting %q", c.args, text(res), c.want)
		}
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("show changed the workspace")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// A matrix the way people break it: a status nobody defined, a row with a
// cell too many, a mode with no file, a |-led line outside the table.
const brokenMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1b2c3 | ZZZ | P2 | med | coder | | | Retry the fetcher | 2026-11-01 | 2026-11-02 |
| d4e5f6 | TODO | P1 | hard | wizard | | | Rewrite the parser | 2026-11-01 | 2026-11-01 |
| 0a0b0c | TODO | P3 | easy | coder | | | Fix | the typo | 2026-11-01 | 2026-11-01 |
| 1a1b1c | TODO |P3|easy|coder|||Document the flags|2026-11-03|-|

Notes:
| a stray line that looks like a row
`

// task validate reports what `agentinfra validate --format json` reports:
// every problem with file, line, col, severity and message, and the counts.
// Problems are the result, not a tool error, and nothing changes on disk.
func TestTaskValidateMatchesCLI(t *testing.T) {
	ws := newWorkspace(t, 0)
	if err := os.WriteFile(ws.MatrixPath(), []byte(brokenMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, ws, nil)
	before := treeHash(t, ws.Root)

	var out TaskOutput
	res := callOK(t, cs, "task", map[string]any{"action": "validate"}, &out)
	v := out.Validation
	if v == nil {
		t.Fatalf("no validation in %s", text(res))
	}
	var cli Validation
	if err := json.Unmarshal(runCLI(t, ws.Root, []int{1}, "validate", "--format", "json"), &cli); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(v, cli) {
		a, _ := json.MarshalIndent(v, "", "  ")
		b, _ := json.MarshalIndent(cli, "", "  ")
		t.Errorf("MCP validate:\n%s\nCLI validate --format json:\n%s", a, b)
	}
	if v.File != ".agent/DEVELOPMENT_MATRIX.md" || v.Errors < 2 || v.Warnings < 2 {
		t.Errorf("validation = %+v; want the matrix file, the bad status and the row with a cell too many as errors, the unknown mode and the stray line as warnings", v)
	}
	for _, want := range []string{`"ZZZ"`, "wizard", ":7:1: error", ":11:1: warning"} {
		if !strings.Contains(text(res), want) && !strings.Contains(jsonString(v), want) {
			t.Errorf("validate does not mention %s:\n%s", want, text(res))
		}
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("validate changed the workspace")
	}

	// A clean matrix: no diagnostics, and [] rather than null.
	clean := newWorkspace(t, 2)
	_, cs2 := connect(t, clean, nil)
	res = callOK(t, cs2, "task", map[string]any{"action": "validate"}, &out)
	if out.Validation == nil || out.Validation.Tasks != 2 || out.Validation.Errors+out.Validation.Warnings != 0 {
		t.Errorf("clean matrix: %+v", out.Validation)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"diagnostics":[]`) {
		t.Errorf("clean matrix: %s, want \"diagnostics\":[]", b)
	}
	res = call(t, cs2, "task", map[string]any{"action": "validate", "id": "x"})
	if !res.IsError || !strings.HasPrefix(errMessage(t, res), "id: not used by action validate") {
		t.Errorf("validate with an id: %s", text(res))
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
