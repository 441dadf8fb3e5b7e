// Package e2etools finds the pinned npm tools (agent CLIs, MCP Inspector) that
// scripts/install-tools.sh installs, and the pinned Go tools (go-task) of
// scripts/install-go-tools.sh, for end-to-end tests.
package e2etools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvE2E set to 1 (as CI does) turns a missing tool from a skip into a failure.
const EnvE2E = "AGENTINFRA_E2E"

// Dir is $AGENTINFRA_TOOLS, else <repo root>/.tools/npm (the folder above the
// working directory that holds go.mod).
func Dir() string {
	if d := os.Getenv("AGENTINFRA_TOOLS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), ".tools", "npm")
}

// repoRoot is the folder above the working directory that holds go.mod
// ("" when there is none).
func repoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Bin returns node_modules/.bin/NAME from Dir for a test that runs a real
// agent CLI or the MCP Inspector. Those tests start real Node processes and
// take seconds each (minutes per package on a 2-core machine), so they run
// only with AGENTINFRA_E2E=1 (CI sets it; the default `go test ./...` stays
// within a couple of minutes) and then a missing tool is a failure.
func Bin(t testing.TB, name string) string {
	t.Helper()
	e2e := os.Getenv(EnvE2E) == "1"
	if !e2e {
		t.Skipf("a real %s: end-to-end, runs with %s=1 (as CI does)", name, EnvE2E)
	}
	bin := filepath.Join(Dir(), "node_modules", ".bin", name)
	_, err := os.Stat(bin)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		t.Fatalf("%s is not runnable (%v) and %s=1: run scripts/install-tools.sh", name, err, EnvE2E)
	}
	return bin
}

// EnvStress set to 1 (as CI does) runs the long stress and random-kill
// suites.
const EnvStress = "AGENTINFRA_STRESS"

// StressOnly skips a suite that kills or starts real processes by the
// hundred unless AGENTINFRA_STRESS=1; what covers it by default says why
// (an exact-boundary test, a smaller run).
func StressOnly(t testing.TB, byDefault string) {
	t.Helper()
	if os.Getenv(EnvStress) != "1" {
		t.Skipf("a stress suite, runs with %s=1 (as CI does); by default %s", EnvStress, byDefault)
	}
}

// E2EOnly skips a long end-to-end test (one that drives real processes —
// git, the built binary, a supervisor — through many steps) unless
// AGENTINFRA_E2E=1, so the default `go test ./...` stays short; byDefault
// names the faster test that still covers the area in the default run.
func E2EOnly(t testing.TB, byDefault string) {
	t.Helper()
	if os.Getenv(EnvE2E) != "1" {
		t.Skipf("a long end-to-end test, runs with %s=1 (as CI does); by default %s", EnvE2E, byDefault)
	}
}
