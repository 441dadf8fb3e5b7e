package e2etools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvGoTools overrides where scripts/install-go-tools.sh puts the pinned Go
// tools (default <repo root>/.tools/go/bin).
const EnvGoTools = "AGENTINFRA_GO_TOOLS"

// GoToolsDir is $AGENTINFRA_GO_TOOLS, else <repo root>/.tools/go/bin.
func GoToolsDir() string {
	if d := os.Getenv(EnvGoTools); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), ".tools", "go", "bin")
}

// GoBin returns the pinned Go tool NAME from GoToolsDir (`task` is go-task).
// When it is missing the test skips — or fails when AGENTINFRA_E2E=1, as in
// CI, which installs it first.
func GoBin(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(GoToolsDir(), name)
	if _, err := exec.LookPath(bin); err != nil {
		if os.Getenv(EnvE2E) == "1" {
			t.Fatalf("%s is not installed (%v) and %s=1: run scripts/install-go-tools.sh", name, err, EnvE2E)
		}
		t.Skipf("%s is not installed (%v); run scripts/install-go-tools.sh (%s=1 makes this a failure)", name, err, EnvE2E)
	}
	return bin
}
