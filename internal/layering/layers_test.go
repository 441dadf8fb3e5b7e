package layering

import (
	"strings"
	"testing"
)

// layers orders the module's packages: a package imports only packages of
// its own layer or a lower one. An entry names a package and the packages
// under it; the longest entry that matches a package wins (supervision/
// policy is lower than supervision). A new package that no entry matches
// fails TestImportsFollowTheLayers until it is placed here.
var layers = []struct {
	name string
	pkgs []string
}{
	// What everything may use: errors, the event bus, small helpers, the
	// process and CLI runners, the policy's rules, the watchdog's clock.
	{"base", []string{"agenterr", "events", "internal", "contain", "runner", "supervision/policy", "supervision/watchdog", "fleet/metadata"}},
	// The workspace's files: config, the matrix, tasks, prompts, skills.
	{"files", []string{"config", "matrix", "workspace", "skills", "task", "prompt", "taskcontext", "fix", "handoff"}},
	// The one database.
	{"state", []string{"store"}},
	// What runs and records an agent's work over the store, whatever the
	// CLI (keepmoving drives a conversation its caller starts).
	{"engines", []string{"agentrun", "supervision/checkpoint", "supervision/keepmoving", "fleet/statefile"}},
	// Each agent CLI (headless, and supervised through its bridge) and what
	// their bridges share.
	{"clis", []string{"bridge", "agentcli"}},
	// The services: supervision (the surfaces' one way to its state), the
	// supervised run, the run executor, dispatch, the fleet, review and landing.
	{"services", []string{"supervision", "execute", "dispatch", "fleet", "review"}},
	// The surfaces: a person's or a client's way in.
	{"surfaces", []string{"console", "slack", "mcpserver", "cmd"}},
}

// surfaces are the packages a person or a client acts through: they read
// and change supervision state through package supervision's Service only.
var surfaces = []string{"cmd", "console", "slack", "mcpserver"}

// under reports whether rel is pkg or a package under it.
func under(rel, pkg string) bool { return rel == pkg || strings.HasPrefix(rel, pkg+"/") }

// layerOf is the index in layers of a package of the module ("" rel: not
// the module's) and the entry that placed it; -1 when none does.
func layerOf(rel string) (int, string) {
	best, entry := -1, ""
	for i, l := range layers {
		for _, p := range l.pkgs {
			if under(rel, p) && len(p) > len(entry) {
				best, entry = i, p
			}
		}
	}
	return best, entry
}

// imports lists each production package of the module (test fakes aside)
// with its direct imports (test files' aside), relative to the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, line := range goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...") {
		fields := strings.Fields(line)
		if isFake(fields[0]) {
			continue
		}
		rel := strings.TrimPrefix(fields[0], module+"/")
		out[rel] = nil
		for _, imp := range fields[1:] {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				out[rel] = append(out[rel], r)
			}
		}
	}
	return out
}

// Every package of the module has its layer, and imports nothing of a
// higher one (a store that imported the supervision service, a service
// that imported a surface).
func TestImportsFollowTheLayers(t *testing.T) {
	all := imports(t)
	if len(all) < 30 {
		t.Fatalf("%d packages: the module's layout is not what this test knows", len(all))
	}
	for pkg, deps := range all {
		l, _ := layerOf(pkg)
		if l < 0 {
			t.Errorf("%s is in no layer: place it in internal/layering's layers", pkg)
			continue
		}
		for _, dep := range deps {
			if isFake(module + "/" + dep) {
				continue // TestNoProductionPackageImportsAFake's
			}
			if dl, _ := layerOf(dep); dl > l {
				t.Errorf("%s (layer %s) imports %s (layer %s): an import against the layering", pkg, layers[l].name, dep, layers[dl].name)
			}
		}
	}
}

// No surface imports the store: what the terminal, the web console, Slack
// and the MCP server read or change of supervision goes through package
// supervision's Service (one rule of who may, one event per change).
func TestNoSurfaceImportsTheStore(t *testing.T) {
	n := 0
	for pkg, deps := range imports(t) {
		isSurface := false
		for _, s := range surfaces {
			isSurface = isSurface || under(pkg, s)
		}
		if !isSurface {
			continue
		}
		n++
		for _, dep := range deps {
			if under(dep, "store") {
				t.Errorf("the surface %s imports %s: go through package supervision's Service", pkg, dep)
			}
		}
	}
	if n < 6 {
		t.Fatalf("%d surface packages: not the module this test knows", n)
	}
}

// The packages of the workspace's files — the matrix, tasks, the
// workspace, prompts — link no database, MCP SDK or Slack client: the
// light commands and any tool built on them stay small.
func TestFilePackagesLinkNoHeavyDependency(t *testing.T) {
	heavy := []string{"modernc.org/sqlite", "github.com/modelcontextprotocol/go-sdk", "github.com/slack-go/slack"}
	for _, pkg := range []string{"matrix", "task", "workspace", "prompt"} {
		for _, dep := range goList(t, "-deps", "./"+pkg) {
			for _, h := range heavy {
				if under(dep, h) {
					t.Errorf("%s links %s (go list -deps ./%s)", pkg, dep, pkg)
				}
			}
		}
	}
}

// The rules have teeth: the layers place packages as they should.
func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]string{
		"supervision/policy": "base", "supervision": "services", "supervision/supervised": "services", "store": "state",
		"internal/atomicfile": "base", "cmd/agentinfra/internal/full": "surfaces", "fleet/coder": "services", "fleet/metadata": "base",
		"supervision/keepmoving": "engines", "bridge": "clis", "agentcli/claude": "clis", "execute": "services", "fleet/local": "services",
	} {
		if l, _ := layerOf(pkg); l < 0 || layers[l].name != want {
			t.Errorf("layerOf(%s) = %d, want %s", pkg, l, want)
		}
	}
	if l, _ := layerOf("nowhere"); l != -1 {
		t.Errorf("an unknown package has layer %d", l)
	}
}
