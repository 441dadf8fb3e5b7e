package layering

import (
	"strings"
	"testing"
)

// Arrows the layers alone do not forbid (both ends share a layer, or one
// is a test fake): the fleet's model imports none of its backends, each
// backend imports no other, and the generic test fakes (internal/testing)
// import no backend — a backend's fake lives with it (fleet/coder/codertest).
func TestNoBackArrowsAmongTheFleetAndTheFakes(t *testing.T) {
	backends := []string{"fleet/local", "fleet/coder"}
	lines := goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./fleet/...", "./internal/testing/...")
	if len(lines) < 10 {
		t.Fatalf("%d packages under fleet/ and internal/testing/: not the module this test knows", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		own := ""
		for _, b := range backends {
			if under(pkg, b) {
				own = b
			}
		}
		isModel := under(pkg, "fleet") && own == "" && pkg != "fleet/backends"
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			for _, b := range backends {
				switch {
				case !under(dep, b) || b == own:
				case isModel && !under(pkg, "internal/testing"):
					t.Errorf("%s imports the backend %s: the fleet's model and shared rules sit below its backends", pkg, dep)
				case own != "":
					t.Errorf("the backend %s imports the backend %s: what both need belongs in package fleet", pkg, dep)
				case under(pkg, "internal/testing"):
					t.Errorf("the fake %s imports the backend %s: a backend's fake lives with the backend", pkg, dep)
				}
			}
		}
	}
}
