package full

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// The test helpers of package cli (cli_test.go, task_test.go...) that this
// package's tests use too: test files cannot be shared between packages.

// taskNow is the clock of every in-process run.
var taskNow = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// cliOpts is what a test sets about the process the CLI runs in.
type cliOpts struct {
	tty   bool
	width int
	// env is the whole environment; HOME is dir unless env sets it.
	env   map[string]string
	stdin string
}

// testFactory is the Factory of an in-process run in dir: a pinned clock, a
// private environment, buffers for the streams.
func testFactory(dir string, o cliOpts) (f *Factory, stdout, stderr *bytes.Buffer) {
	env := map[string]string{"HOME": dir}
	for k, v := range o.env {
		env[k] = v
	}
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	return &Factory{&cli.Factory{
		IO:     &cli.IOStreams{In: strings.NewReader(o.stdin), Out: stdout, ErrOut: stderr, IsTTY: o.tty, Width: o.width},
		Cwd:    dir,
		Now:    func() time.Time { return taskNow },
		Getenv: func(k string) string { return env[k] },
	}}, stdout, stderr
}

// runCLI runs `agentinfra args...` in-process in dir, as main does, and
// returns its exit code, stdout and stderr.
func runCLI(t testing.TB, dir string, o cliOpts, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errb := testFactory(dir, o)
	code = run(context.Background(), args, f)
	return code, out.String(), errb.String()
}

const fixtureMatrix = `# Development Matrix

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

// fixtureWS is an initialized workspace holding fixtureMatrix, a go-testing
// skill, and task folders for every row but c3d4e5. The store's lock file
// exists, as in any workspace that has been written once.
func fixtureWS(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if code, _, errOut := runCLI(t, root, cliOpts{}, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".agent/DEVELOPMENT_MATRIX.md", fixtureMatrix)
	write(".agent/.DEVELOPMENT_MATRIX.md.lock", "")
	write(".agent/skills/go-testing/SKILL.md", "---\nname: go-testing\ndescription: Go tests\n---\nWrite table tests.\n")
	for _, tk := range matrix.Parse([]byte(fixtureMatrix)).Tasks() {
		if tk.ID == "c3d4e5" {
			continue
		}
		dir := filepath.Join(".agent/tasks", tk.ID+"_"+task.Slugify(tk.Description))
		write(filepath.Join(dir, "README.md"), task.RenderReadme(task.DefaultTemplate(), tk, "", tk.Created))
		write(filepath.Join(dir, "tracking", "notes.md"), "notes\n")
	}
	return root
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func matrixOf(t *testing.T, root string) string {
	return readText(t, filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"))
}

// gitApply applies a unified diff to old with git apply and returns the result.
func gitApply(t *testing.T, old, diff string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v: %s", err, out)
	}
	return readText(t, p)
}

// newValidateWorkspace makes a workspace whose matrix is src, with mode coder
// and skill go-testing present.
func newValidateWorkspace(t *testing.T, src string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".agent/agents", ".agent/skills/go-testing", ".agent/tasks"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".agent/agents/coder.md", "You write code.\n")
	write(".agent/skills/go-testing/SKILL.md", "---\nname: go-testing\ndescription: tests\n---\nBody\n")
	write(".agent/DEVELOPMENT_MATRIX.md", src)
	return root
}

// rowsWS is an initialized workspace whose matrix is written the way people
// write them: 12-digit IDs, cells that go on over several lines (lists, a
// fence, a heading), a 9-cell and an 11-cell row, rows after a blank line.
func rowsWS(t *testing.T, src []byte) string {
	t.Helper()
	root := t.TempDir()
	if code, _, errOut := runCLI(t, root, cliOpts{}, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	if src == nil {
		var err error
		if src, err = os.ReadFile(filepath.Join("..", "..", "..", "..", "matrix", "testdata", "rows", "real.md")); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{"DEVELOPMENT_MATRIX.md": src, ".DEVELOPMENT_MATRIX.md.lock": nil} {
		if err := os.WriteFile(filepath.Join(root, ".agent", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var (
	taskBinOnce sync.Once
	taskBinPath string
	taskBinErr  error
)

// taskBinary builds agentinfra and agentinfra-full, side by side, once per
// test run, for the tests that need real processes; it returns agentinfra,
// which hands this package's commands over to agentinfra-full as installed.
func taskBinary(t *testing.T) string {
	t.Helper()
	taskBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentinfra-task-bin")
		if err != nil {
			taskBinErr = err
			return
		}
		taskBinPath = filepath.Join(dir, "agentinfra")
		for bin, pkg := range map[string]string{taskBinPath: "github.com/agentinfra/agentinfra/cmd/agentinfra",
			filepath.Join(dir, cli.FullBinary): "github.com/agentinfra/agentinfra/cmd/agentinfra/agentinfra-full"} {
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				taskBinErr = fmt.Errorf("%v\n%s", err, out)
				return
			}
		}
	})
	if taskBinErr != nil {
		t.Fatalf("build agentinfra: %v", taskBinErr)
	}
	return taskBinPath
}
