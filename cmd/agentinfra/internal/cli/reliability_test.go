package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

func reliabilityWS(t *testing.T) (string, *workspace.Workspace, string) {
	t.Helper()
	root := t.TempDir()
	if _, err := task.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(root)
	c, err := task.CreateTask(context.Background(), ws, task.CreateOptions{Description: "first", Mode: "coder"}, taskNow)
	if err != nil {
		t.Fatal(err)
	}
	return root, ws, c.Task.ID
}

// Issue 18, item 8 through the CLI: a description with a control character
// is refused (exit 2, naming the flag), and validate reports one that a
// person or another tool put in the file (exit 1).
func TestCLIControlCharacters(t *testing.T) {
	root, ws, id := reliabilityWS(t)
	before := readText(t, ws.MatrixPath())
	code, _, stderr := runCLI(t, root, cliOpts{}, "task", "create", "--description", "red \x1b[31malert", "--mode", "coder")
	if code != 2 || !strings.Contains(stderr, "invalid --description: holds the control character U+001B (ESC)") {
		t.Errorf("create: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, root, cliOpts{}, "task", "update", id, "--set", "Description=bell\a")
	if code != 2 || !strings.Contains(stderr, "control character U+0007 (BEL)") {
		t.Errorf("update: exit %d, %s", code, stderr)
	}
	if readText(t, ws.MatrixPath()) != before {
		t.Fatal("a refused change was written")
	}
	if err := os.WriteFile(ws.MatrixPath(), []byte(strings.Replace(before, "| first |", "| fi\x00rst |", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, root, cliOpts{}, "validate")
	if code != 1 || !strings.Contains(out+stderr, "error: control character U+0000 (NUL)") {
		t.Errorf("validate: exit %d\n%s%s", code, out, stderr)
	}
}

// Issue 18, item 10: a description over the cell limit is refused by the CLI.
func TestCLIDescriptionSizeLimit(t *testing.T) {
	root, _, _ := reliabilityWS(t)
	code, _, stderr := runCLI(t, root, cliOpts{}, "task", "create", "--description", strings.Repeat("x", 64<<10+1), "--mode", "coder")
	if code != 2 || !strings.Contains(stderr, "over the limit of 65536 bytes") || len(stderr) > 1000 {
		t.Errorf("create: exit %d, %.300s", code, stderr)
	}
}

// restore puts back the version before the last write; --dry-run shows it.
func TestCLIRestore(t *testing.T) {
	root, ws, id := reliabilityWS(t)
	before := readText(t, ws.MatrixPath())
	if code, _, stderr := runCLI(t, root, cliOpts{}, "task", "update", id, "--status", "BLOCKED"); code != 0 {
		t.Fatal(stderr)
	}
	after := readText(t, ws.MatrixPath())
	code, out, stderr := runCLI(t, root, cliOpts{}, "restore", "--dry-run")
	if code != 0 || !strings.Contains(out, "-| "+id+" | BLOCKED |") || !strings.Contains(out, "+| "+id+" | TODO |") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("restore --dry-run: exit %d\n%s%s", code, out, stderr)
	}
	if readText(t, ws.MatrixPath()) != after {
		t.Fatal("the dry run wrote")
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "restore", "--json")
	var r restoreOutput
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Changed || r.Previous != ".agent/.DEVELOPMENT_MATRIX.md.prev" {
		t.Errorf("restore: exit %d %s", code, out)
	}
	if readText(t, ws.MatrixPath()) != before {
		t.Errorf("after restore:\n%s", readText(t, ws.MatrixPath()))
	}
	if code, _, _ := runCLI(t, root, cliOpts{}, "restore"); code != 0 || readText(t, ws.MatrixPath()) != after {
		t.Errorf("a second restore did not undo the first")
	}
	// No previous version: said, exit 1.
	if err := os.Remove(filepath.Join(ws.AgentDir(), ".DEVELOPMENT_MATRIX.md.prev")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, root, cliOpts{}, "restore"); code != 1 || !strings.Contains(stderr, "no previous version") {
		t.Errorf("without a previous version: exit %d %s", code, stderr)
	}
}

// Issue 18, item 8: the pre-commit hook let a matrix with a NUL byte through
// ("no problems"); git would store it as a binary file. It refuses it now.
func TestHookRefusesAMatrixWithANul(t *testing.T) {
	r := newHookRepo(t, threeRows)
	r.git("add", "-A")
	if out, ok := r.commit("first"); !ok {
		t.Fatalf("first commit: %s", out)
	}
	r.write(".agent/DEVELOPMENT_MATRIX.md", strings.Replace(threeRows, "Second task", "Second\x00task", 1))
	r.git("add", "-A")
	out, ok := r.commit("with a NUL")
	if ok || !strings.Contains(out, "control character U+0000 (NUL)") {
		t.Fatalf("commit with a NUL in the matrix: made %v\n%s", ok, out)
	}
}
