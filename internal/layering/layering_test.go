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
		rel == "fleet/coder/codertest" || strings.HasPrefix(rel, "fleet/coder/codertest/") || rel == "fleet/fleettest"
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
	// One go list for all: .Deps is each package's transitive imports.
	for _, line := range goList(t, append([]string{"-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, prod...)...) {
		deps := strings.Fields(line)
		for _, dep := range deps[1:] {
			if isFake(dep) {
				t.Errorf("%s imports the test fake %s (go list -deps %s)", deps[0], dep, deps[0])
			}
		}
	}
}

// The dev binaries and test fakes import no adapter: a fake Coder run by
// hand needs neither the CLI nor the MCP server.
func TestFakesImportNoAdapter(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./internal/testing/...", "./fleet/coder/codertest/...", "./fleet/fleettest") {
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
		module + "/fleet/coder/codertest/fakecoder": true, module + "/internal/testing/golden": true,
		module + "/fleet/coder/codertest": true, "testing": true, "testing/fstest": true,
		module + "/internal/httpguard": false, module + "/fleet/coder": false, module + "/internal/atomicfile": false, "net/http": false,
	} {
		if isFake(p) != want {
			t.Errorf("isFake(%s) = %v", p, !want)
		}
	}
}

// heavyDeps are the packages whose start-up the light commands must not pay
// (issue 21): the supervision database, the MCP SDK, Slack, the console's
// browser driver (which only the console's tests link today). Only
// agentinfra-full may link them.
var heavyDeps = []string{"modernc.org/sqlite", "github.com/modelcontextprotocol/go-sdk", "github.com/slack-go/slack", "github.com/chromedp/"}

// isHeavy reports whether pkg is one of heavyDeps or under one.
func isHeavy(pkg string) bool {
	for _, h := range heavyDeps {
		if pkg == strings.TrimSuffix(h, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(h, "/")+"/") {
			return true
		}
	}
	return false
}

// The binary people install, cmd/agentinfra, links none of heavyDeps: Go runs
// every linked package's init in every process, so the light commands (task,
// validate, prompt...) would pay for them; agentinfra-full, which links
// them, runs the rest (cmd/agentinfra/internal/cli's full_binary.go).
func TestLightBinaryLinksNoHeavyPackage(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/agentinfra")
	if len(deps) < 50 {
		t.Fatalf("go list -deps ./cmd/agentinfra: %d packages: not the binary this test knows", len(deps))
	}
	for _, dep := range deps {
		if isHeavy(dep) {
			t.Errorf("cmd/agentinfra links %s (go list -deps ./cmd/agentinfra); move the command that needs it to cmd/agentinfra/internal/full", dep)
		}
	}
	// The rule has teeth: agentinfra-full links each of them (chromedp aside).
	full := map[string]bool{}
	for _, dep := range goList(t, "-deps", "./cmd/agentinfra/agentinfra-full") {
		for _, h := range heavyDeps {
			if isHeavy(dep) && strings.HasPrefix(dep, strings.TrimSuffix(h, "/")) {
				full[h] = true
			}
		}
	}
	for _, h := range heavyDeps[:3] {
		if !full[h] {
			t.Errorf("agentinfra-full does not link %s: the list of heavy packages is out of date", h)
		}
	}
}
