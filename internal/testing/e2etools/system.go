package e2etools

import (
	"os"
	"os/exec"
	"testing"
)

// System returns the path of a tool installed from the system's packages
// (the pre-commit framework: `apt-get install pre-commit`, which .ci/run
// installs). When it is not on PATH the test skips — or fails when
// AGENTINFRA_E2E=1, as a missing npm tool does.
func System(t testing.TB, name, install string) string {
	t.Helper()
	e2e := os.Getenv(EnvE2E) == "1"
	if testing.Short() && !e2e {
		t.Skipf("%s end-to-end test skipped in -short mode", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if e2e {
			t.Fatalf("%s is not on PATH (%v) and %s=1: install it (%s)", name, err, EnvE2E, install)
		}
		t.Skipf("%s is not installed (%v); install it (%s) to run this test (%s=1 makes this a failure)", name, err, install, EnvE2E)
	}
	return p
}
