package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const validMatrix = `# Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1b2c3 | TODO | P1 | med | coder | go-testing | @coder | First task | 2026-01-02 | 2026-01-02 |
`

func TestValidateCleanWorkspace(t *testing.T) {
	root := newValidateWorkspace(t, validMatrix)
	code, out, errOut := runCLI(t, root, cliOpts{}, "validate")
	if code != 0 || out != "" {
		t.Fatalf("validate = %d, stdout %q, stderr %q; want 0 and no diagnostics", code, out, errOut)
	}
	if !strings.Contains(errOut, "1 tasks, no problems") {
		t.Errorf("stderr %q does not report the clean result", errOut)
	}
}

func TestValidateReportsErrorsWithLocations(t *testing.T) {
	src := validMatrix +
		"| a1b2c3 | DONE | P2 | easy | coder | | | Duplicate | 2026-01-02 | 2026-01-02 |\n" +
		"| X.Z | PAUSED | P9 | huge | coder | | | Bad values | 2026-13-01 | yesterday |\n" +
		"| b2c3d4 | TODO | P1 | med | coder | | | Missing cells |\n"
	root := newValidateWorkspace(t, src)
	code, out, _ := runCLI(t, root, cliOpts{}, "validate")
	if code != 1 {
		t.Fatalf("exit code = %d, want 1; output:\n%s", code, out)
	}
	want := []string{
		".agent/DEVELOPMENT_MATRIX.md:6:3: error: duplicate ID a1b2c3: also on line 5",
		".agent/DEVELOPMENT_MATRIX.md:7:3: error: malformed ID \"X.Z\"",
		".agent/DEVELOPMENT_MATRIX.md:7:9: error: unknown status \"PAUSED\"",
		"error: unknown priority \"P9\"",
		"error: unknown difficulty \"huge\"",
		"error: bad Created date \"2026-13-01\"",
		"error: bad Updated date \"yesterday\"",
		".agent/DEVELOPMENT_MATRIX.md:8:1: error: row of task b2c3d4 has 8 cells but the table header has 10, so it is not read",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q; got:\n%s", w, out)
		}
	}
}

func TestValidateWorkspaceWarningsDoNotFail(t *testing.T) {
	src := validMatrix + "| c3d4e5 | IN_PROGRESS | P2 | med | ghost | nosuch | | Needs a folder | 2026-01-02 | 2026-01-02 |\n"
	root := newValidateWorkspace(t, src)
	if err := os.MkdirAll(filepath.Join(root, ".agent/tasks/ffffff_orphan"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, root, cliOpts{}, "validate", "--format", "json")
	if code != 0 {
		t.Fatalf("warnings alone must pass; exit %d, output:\n%s", code, out)
	}
	var res validationResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--format json output is not JSON: %v\n%s", err, out)
	}
	if res.Errors != 0 || res.Warnings != 4 || res.Tasks != 2 {
		t.Fatalf("got %d errors, %d warnings, %d tasks; want 0, 4, 2: %+v", res.Errors, res.Warnings, res.Tasks, res.Diagnostics)
	}
	joined := ""
	for _, d := range res.Diagnostics {
		joined += d.String() + "\n"
	}
	for _, w := range []string{`mode "ghost" has no .agent/agents/ghost.md`, `skill "nosuch" has no`, "c3d4e5 is IN_PROGRESS but has no folder", "ffffff_orphan has no row"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestValidateUsageAndMissingFile(t *testing.T) {
	root := newValidateWorkspace(t, validMatrix)
	if code, _, errOut := runCLI(t, root, cliOpts{}, "validate", "--format", "yaml"); code != 2 || !strings.Contains(errOut, "--format must be text or json") {
		t.Errorf("bad --format: exit %d, stderr %q; want 2 and a hint", code, errOut)
	}
	if code, _, errOut := runCLI(t, root, cliOpts{}, "validate", "nope.md"); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	empty := t.TempDir()
	if code, _, errOut := runCLI(t, empty, cliOpts{}, "validate"); code != 3 || !strings.Contains(errOut, "agentinfra init") {
		t.Errorf("no workspace: exit %d, stderr %q; want 3 (not found) and a hint to run init", code, errOut)
	}
}

func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHookInstallRefusesInvalidStagedMatrix(t *testing.T) {
	bin := taskBinary(t)
	root := newValidateWorkspace(t, validMatrix)
	if out, err := git(t, root, "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	// An existing hook must be kept, not replaced.
	hooks := filepath.Join(root, ".git", "hooks")
	if err := os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\necho existing-hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"added the check (at the top, so it runs before the hook's own commands) to", "already installed in"} {
		out, err := exec.Command(bin, "--root", root, "hook", "install").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("hook install #%d: %v, %q; want %q", i+1, err, out, want)
		}
	}
	hook, _ := os.ReadFile(filepath.Join(hooks, "pre-commit"))
	if !strings.Contains(string(hook), "echo existing-hook-ran") || strings.Count(string(hook), hookBegin) != 1 {
		t.Fatalf("hook lost the existing content or was added twice:\n%s", hook)
	}
	// The hook must find this binary: put it first on PATH.
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	if out, err := git(t, root, "add", "-A"); err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	if out, err := git(t, root, "commit", "-qm", "valid"); err != nil || !strings.Contains(out, "existing-hook-ran") {
		t.Fatalf("a valid matrix must commit, and the existing hook run: %v\n%s", err, out)
	}
	bad := validMatrix + "| a1b2c3 | DONE | P2 | easy | coder | | | Duplicate | 2026-01-02 | 2026-01-02 |\n"
	matrixPath := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.WriteFile(matrixPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "-A")
	out, err := git(t, root, "commit", "-qm", "invalid")
	if err == nil {
		t.Fatalf("commit with a duplicate ID was accepted:\n%s", out)
	}
	for _, w := range []string{"duplicate ID a1b2c3", "the staged matrix has errors"} {
		if !strings.Contains(out, w) {
			t.Errorf("hook output lacks %q:\n%s", w, out)
		}
	}
	// Fixing the working tree without staging still refuses: the index is checked.
	if err := os.WriteFile(matrixPath, []byte(validMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := git(t, root, "commit", "-qm", "still invalid"); err == nil {
		t.Fatalf("the staged (invalid) version must be checked, not the working tree:\n%s", out)
	}
}

// A config whose statuses leave out a workflow status is named where the
// user stands, as the matrix is: from a subfolder, ../.agent/config.yaml.
func TestValidateNamesTheConfigFromTheCurrentFolder(t *testing.T) {
	root := newValidateWorkspace(t, validMatrix)
	cfg := "matrix:\n  statuses: [TODO, IN_PROGRESS, DONE, BLOCKED]\n"
	if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "web")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, sub, cliOpts{}, "validate")
	want := "\n" + filepath.Join("..", ".agent", "config.yaml") + ":2:1: warning: the matrix vocabulary has no word for a workflow status: agentinfra moves tasks to REVIEW"
	if code != 0 || !strings.Contains("\n"+stdout, want) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant a line starting %q", code, stdout, stderr, want[1:])
	}
}

// validate says how many rows no command reads, in text and JSON (issue 19).
func TestValidateCountsUnreadRows(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "matrix", "testdata", "rows", "real.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := newValidateWorkspace(t, string(src))
	code, _, errOut := runCLI(t, root, cliOpts{}, "validate")
	if code != 1 || !strings.Contains(errOut, ".agent/DEVELOPMENT_MATRIX.md: 8 tasks, 2 rows could not be read (task list, show and every other command skip them until they are fixed)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	_, out, _ := runCLI(t, root, cliOpts{}, "validate", "--json")
	var r struct {
		Tasks  int `json:"tasks"`
		Unread int `json:"unread_rows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Tasks != 8 || r.Unread != 2 {
		t.Errorf("--json: %+v %v\n%s", r, err, out)
	}
}
