package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

func TestCLITaskClaim(t *testing.T) {
	root := fixtureWS(t)
	readme := filepath.Join(root, ".agent/tasks/a1b2c3_add_retry_to_the_fetcher/README.md")
	readme0 := readText(t, readme)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "claim", "a1b2c3", "--agent", "papi", "--json")
	var js struct {
		Task struct {
			Status string   `json:"status"`
			Agents []string `json:"agents"`
		} `json:"task"`
		Changed []string `json:"changed"`
		LogFile string   `json:"log_file"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || js.Task.Status != "IN_PROGRESS" ||
		strings.Join(js.Task.Agents, " ") != "@coder @papi" || js.LogFile != ".agent/tasks/a1b2c3_add_retry_to_the_fetcher/README.md" {
		t.Fatalf("claim: %d %q %q", code, out, errOut)
	}
	if got := readText(t, readme); got != readme0+"- 2026-11-21 14:05: status TODO → IN_PROGRESS by @papi\n" {
		t.Errorf("README after claim:\n%s", got)
	}
	check := treehash.Guard(t, root)
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"a1b2c3", "--agent", "@papi"}, 0, "a1b2c3: already IN_PROGRESS, held by @papi\n", ""},
		{[]string{"a1b2c3", "--agent", "@coder"}, 4, "", "error: task a1b2c3 is IN_PROGRESS, held by @papi\n"}, // conflict
		{[]string{"b2c3d4", "--agent", "@coder"}, 4, "", "error: task b2c3d4 is IN_PROGRESS, held by @reviewer\n"},
		{[]string{"d4e5f6", "--agent", "@coder"}, 4, "", "error: task d4e5f6 is REVIEW; only a TODO task can be claimed\n"},
		{[]string{"a1b2c4", "--agent", "@coder"}, 3, "", "error: no task \"a1b2c4\"; did you mean a1b2c3?\n"}, // not found
		{[]string{"a1b2c3", "--agent", "two words"}, 2, "", "error: invalid --agent \"two words\": not an @mention (letters, digits, '-', '_', '.')\n"},
		{[]string{"a1b2c3"}, 2, "", "error: --agent is required"},
	} {
		code, out, errOut := runCLI(t, root, cliOpts{}, append([]string{"task", "claim"}, c.args...)...)
		if code != c.code || out != c.stdout || !strings.HasPrefix(errOut, c.stderr) {
			t.Errorf("claim %v: exit %d, stdout %q, stderr %q; want %d %q %q", c.args, code, out, errOut, c.code, c.stdout, c.stderr)
		}
	}
	check()
	if code, out, _ := runCLI(t, root, cliOpts{}, "task", "claim", "--help"); code != 0 || !strings.Contains(out, "agentinfra task claim 3f9a2c --agent @coder") {
		t.Errorf("claim --help: %d %q", code, out)
	}
}
