package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentinfra/agentinfra"

// isFake reports whether a package is a test fake, harness or dev binary:
// what production code must never import.
func isFake(pkg string) bool {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return pkg == "testing" || strings.HasPrefix(pkg, "testing/") || pkg == "net/http/httptest"
	}
	return strings.HasPrefix(rel, "internal/testing/") || strings.HasPrefix(rel, "internal/layering") ||
		rel == "fleet/coder/codertest" || rel == "fleet/fleettest"
}

// isAdapter reports whether a package is an adapter (the CLI, the MCP
// server): no dev binary imports one.
func isAdapter(pkg string) bool {
	return pkg == module+"/cmd/agentinfra" || strings.HasPrefix(pkg, module+"/cmd/agentinfra/") || pkg == module+"/mcpserver"
}

// goList runs go list in the module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// `go list -deps` of every production package names no test fake: no
// package under internal/testing/, neither codertest nor fleettest, nor
// the standard testing package. The fakes are where tests (and a dev
// binary run by hand) reach them.
func TestNoProductionPackageImportsAFake(t *testing.T) {
	var prod, fakes []string
	for _, p := range goList(t, "./...") {
		if isFake(p) {
			fakes = append(fakes, p)
		} else {
			prod = append(prod, p)
		}
	}
	if len(prod) < 20 || len(fakes) < 8 {
		t.Fatalf("%d production packages and %d fakes: the module's layout is not what this test knows", len(prod), len(fakes))
	}
	for _, p := range prod {
		for _, dep := range goList(t, "-deps", p) {
			if isFake(dep) {
				t.Errorf("%s imports the test fake %s (go list -deps %s)", p, dep, p)
			}
		}
	}
}

// The dev binaries and test fakes import no adapter: a fake Coder run by
// hand needs neither the CLI nor the MCP server.
func TestFakesImportNoAdapter(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./internal/testing/...", "./fleet/coder/codertest", "./fleet/fleettest") {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			if isAdapter(dep) {
				t.Errorf("%s imports the adapter %s", fields[0], dep)
			}
		}
	}
}

// The rule has teeth: a test fake is seen as one.
func TestIsFake(t *testing.T) {
	for p, want := range map[string]bool{
		module + "/internal/testing/fakecoder": true, module + "/internal/testing/golden": true,
		module + "/fleet/coder/codertest": true, "testing": true, "testing/fstest": true,
		module + "/internal/httpguard": false, module + "/fleet/coder": false, module + "/internal/atomicfile": false, "net/http": false,
	} {
		if isFake(p) != want {
			t.Errorf("isFake(%s) = %v", p, !want)
		}
	}
}
