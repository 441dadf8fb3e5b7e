//go:build linux

package full

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/clicheck"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
)

// Issue 33: a supervised run of a CLI outside the tested versions that
// passed agentinfra's protocol check runs, and warns once, naming both
// versions, in its record and its tracking note. The check's result comes
// from the cache, as for every run after the first: here seeded as the
// stub claude's check passed at 2.2.0.
func TestASupervisedRunOfAnUntestedVersionWarnsOnce(t *testing.T) {
	dir, env, cache := renamedClaude(t)
	if out, stderr, err := runIn(t, dir, env, "dispatch", "a1b2c3", "--cli", "claude", "--approval-mode", "ask"); exitCode(err) != 6 {
		t.Fatalf("the first dispatch: exit %d, want 6 (its check failed)\n%s\n%s", exitCode(err), out, stderr)
	}
	// A failed check is not cached (it is checked again): the test seeds
	// the cache with the stub's check passed at 2.2.0.
	var tools string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AGENTINFRA_TOOLS="); ok {
			tools = v
		}
	}
	key, err := clicheck.Key("claude", filepath.Join(tools, "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]map[string]any{key: {"version": "2.2.0", "ok": true}})
	fakemodel.WriteFile(t, filepath.Join(cache, "agentinfra", "cli-checks.json"), string(b))

	// The stub then asks in a shape the bridge does not understand: the
	// run ends failed with the message (never waits), the task BLOCKED.
	out, stderr, err := runIn(t, dir, env, "dispatch", "a1b2c3", "--cli", "claude", "--approval-mode", "ask")
	if exitCode(err) == 0 || !strings.Contains(out+stderr, `"tool":"Bash"`) || !strings.Contains(out, "TODO → BLOCKED") {
		t.Errorf("the run of a CLI whose message the bridge does not understand: exit %d\n%s\n%s", exitCode(err), out, stderr)
	}
	const warning = "claude 2.2.0 is not a version agentinfra is tested with (2.1.330)"
	for _, glob := range []string{"*_result.json", "*_dispatch.md"} {
		files, _ := filepath.Glob(filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "tracking", glob))
		text := ""
		for _, f := range files {
			b, _ := os.ReadFile(f)
			text += string(b)
		}
		// The tracking note lists the warnings with the plan and with the
		// result: each list says it once.
		if n := strings.Count(text, warning); n != 1 && !(glob == "*_dispatch.md" && n == 2 && strings.Count(text, "- Warning: "+warning) == 2) {
			t.Errorf("the run's %s say the warning %d times, want once:\n%s", glob, n, text)
		}
	}
}
