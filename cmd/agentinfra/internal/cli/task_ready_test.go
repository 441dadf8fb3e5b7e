package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const readyMatrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|------|
| a1b2c3 | DONE | P2 | med | coder |  |  | Parser | 2026-11-01 | 2026-11-02 | - |
| b2c3d4 | TODO | P1 | med | coder |  |  | Uses the parser | 2026-11-01 | 2026-11-02 | a1b2c3 |
| c3d4e5 | TODO | P0 | med | coder |  |  | Waits for b2c3d4 | 2026-11-01 | 2026-11-02 | a1b2c3, b2c3d4 |
| d4e5f6 | TODO | P2 | med | coder |  |  | Waits for a typo | 2026-11-01 | 2026-11-02 | zzzzzz |
`

func TestCLITaskListReadyAndValidateDeps(t *testing.T) {
	root := fixtureWS(t)
	if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), []byte(readyMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--ready")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "b2c3d4\t") {
		t.Fatalf("task list --ready: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, root, cliOpts{}, "validate")
	if code != 1 || !strings.Contains(out, "d4e5f6 depends on zzzzzz, which is no task ID") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
}
