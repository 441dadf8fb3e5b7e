// Package clitest is the test harness of the agentinfra commands (packages
// cli and full): an in-process run with a pinned clock, a private
// environment and captured streams, and the workspaces the tests start
// from. It does not import the command packages (their own tests import
// it); each makes its Harness from its entry point and Factory.
package clitest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Now is the clock of every in-process run.
var Now = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// Opts is what a test sets about the process the CLI runs in.
type Opts struct {
	TTY   bool
	Width int
	// Env is the whole environment; HOME is the run's folder unless Env
	// sets it.
	Env   map[string]string
	Stdin string
}

// Process is what an in-process run sees: its folder, streams, clock and
// environment. A package's test turns it into its Factory.
type Process struct {
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr *bytes.Buffer
	TTY            bool
	Width          int
	Now            func() time.Time
	Getenv         func(string) string
}

// NewProcess is the process of a run in dir.
func NewProcess(dir string, o Opts) *Process {
	env := map[string]string{"HOME": dir}
	for k, v := range o.Env {
		env[k] = v
	}
	return &Process{Dir: dir, Stdin: strings.NewReader(o.Stdin), Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer),
		TTY: o.TTY, Width: o.Width, Now: func() time.Time { return Now }, Getenv: func(k string) string { return env[k] }}
}

// Harness runs a command package's entry point in-process: F is the
// package's Factory, made from a Process.
type Harness[F any] struct {
	factory func(*Process) F
	run     func(context.Context, []string, F) int
}

// New is the harness of the entry point run (as main calls it: the
// arguments without the program name, the exit code back), with its
// factory made by factory.
func New[F any](factory func(*Process) F, run func(context.Context, []string, F) int) Harness[F] {
	return Harness[F]{factory: factory, run: run}
}

// Factory is the factory of an in-process run in dir: a pinned clock, a
// private environment, buffers for the streams.
func (h Harness[F]) Factory(dir string, o Opts) (f F, stdout, stderr *bytes.Buffer) {
	p := NewProcess(dir, o)
	return h.factory(p), p.Stdout, p.Stderr
}

// Run runs `agentinfra args...` in-process in dir, as main does, and
// returns its exit code, stdout and stderr.
func (h Harness[F]) Run(t testing.TB, dir string, o Opts, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errb := h.Factory(dir, o)
	code = h.run(context.Background(), args, f)
	return code, out.String(), errb.String()
}

// Init runs `agentinfra init` in a new folder and returns it.
func (h Harness[F]) Init(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if code, _, errOut := h.Run(t, root, Opts{}, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	return root
}

// FixtureMatrix is the matrix of FixtureWS: a row of each status.
const FixtureMatrix = `# Development Matrix

Prose people wrote. Kept byte for byte.

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1b2c3 | TODO | P2 | med | coder | go-testing | @coder | Add retry to the fetcher | 2026-11-01 | 2026-11-02 |
| b2c3d4 | IN_PROGRESS | P1 | hard | coder |  | @coder @reviewer | Make the store lock fair under heavy contention from many writers | 2026-10-01 | 2026-11-20 |
| c3d4e5 | BLOCKED | P3 | easy | explorer |  |  | Map the parser | 2026-09-05 | 2026-09-06 |
| d4e5f6 | REVIEW | P2 | med | reviewer | go-testing | @reviewer | Review the lock code | 2026-11-10 | 2026-11-19 |
| e5f6a7 | DONE | P4 | easy | oracle |  | @oracle | Decide the ID format | 2026-08-01 | 2026-08-02 |

## Notes

Trailing prose, also kept.
`

// FixtureWS is an initialized workspace holding FixtureMatrix, a go-testing
// skill, and task folders for every row but c3d4e5. The store's lock file
// exists, as in any workspace that has been written once.
func (h Harness[F]) FixtureWS(t testing.TB) string {
	t.Helper()
	root := h.Init(t)
	write := func(rel, s string) {
		t.Helper()
		WriteFile(t, filepath.Join(root, rel), s)
	}
	write(".agent/DEVELOPMENT_MATRIX.md", FixtureMatrix)
	write(".agent/.DEVELOPMENT_MATRIX.md.lock", "")
	write(".agent/skills/go-testing/SKILL.md", "---\nname: go-testing\ndescription: Go tests\n---\nWrite table tests.\n")
	for _, tk := range matrix.Parse([]byte(FixtureMatrix)).Tasks() {
		if tk.ID == "c3d4e5" {
			continue
		}
		dir := filepath.Join(".agent/tasks", tk.ID+"_"+task.Slugify(tk.Description))
		write(filepath.Join(dir, "README.md"), task.RenderReadme(task.DefaultTemplate(), tk, "", tk.Created))
		write(filepath.Join(dir, "tracking", "notes.md"), "notes\n")
	}
	return root
}

// RowsWS is an initialized workspace whose matrix is src, or (src nil) one
// written the way people write them (matrix/testdata/rows/real.md):
// 12-digit IDs, cells that go on over several lines (lists, a fence, a
// heading), a 9-cell and an 11-cell row, rows after a blank line.
func (h Harness[F]) RowsWS(t testing.TB, src []byte) string {
	t.Helper()
	root := h.Init(t)
	if src == nil {
		_, file, _, _ := runtime.Caller(0)
		real := filepath.Join(filepath.Dir(file), "..", "..", "..", "matrix", "testdata", "rows", "real.md")
		var err error
		if src, err = os.ReadFile(real); err != nil {
			t.Fatal(err)
		}
	}
	WriteFile(t, filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), string(src))
	WriteFile(t, filepath.Join(root, ".agent", ".DEVELOPMENT_MATRIX.md.lock"), "")
	return root
}

// ValidateWS is a workspace (not initialized) whose matrix is src, with
// mode coder and skill go-testing present.
func ValidateWS(t testing.TB, src string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".agent", "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(root, ".agent/agents/coder.md"), "You write code.\n")
	WriteFile(t, filepath.Join(root, ".agent/skills/go-testing/SKILL.md"), "---\nname: go-testing\ndescription: tests\n---\nBody\n")
	WriteFile(t, filepath.Join(root, ".agent/DEVELOPMENT_MATRIX.md"), src)
	return root
}

// WriteFile writes s to p, making its folders.
func WriteFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadText is the file at p.
func ReadText(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// MatrixOf is the workspace's matrix file.
func MatrixOf(t testing.TB, root string) string {
	t.Helper()
	return ReadText(t, filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"))
}

// GitApply applies a unified diff of the matrix file to old with git apply
// (the diff a --dry-run prints must be one git takes) and returns the
// result.
func GitApply(t testing.TB, old, diff string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, ".agent", "DEVELOPMENT_MATRIX.md")
	WriteFile(t, p, old)
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v: %s", err, out)
	}
	return ReadText(t, p)
}
