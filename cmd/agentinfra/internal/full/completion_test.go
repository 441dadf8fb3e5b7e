package full

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// complete runs cobra's hidden __complete command in-process, as a shell's
// completion script does, and returns the offered values ("value\tdesc").
func complete(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, dir, cliOpts{}, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %q: no directive line last: %q", args, out)
	}
	return lines[:len(lines)-1]
}

func TestCompletionTaskIDs(t *testing.T) {
	root := fixtureWS(t)
	all := []string{
		"a1b2c3\tAdd retry to the fetcher",
		"b2c3d4\tMake the store lock fair under heavy contention from many w…",
		"c3d4e5\tMap the parser",
		"d4e5f6\tReview the lock code",
		"e5f6a7\tDecide the ID format",
	}
	for _, args := range [][]string{
		{"task", "show", ""}, {"task", "update", ""}, {"task", "scaffold", ""}, {"task", "context", ""},
		{"prompt", ""}, {"model", ""}, {"dispatch", ""},
	} {
		if got := complete(t, root, args...); !slices.Equal(got, all) {
			t.Errorf("%q offered\n%q\nwant\n%q", args, got, all)
		}
	}
	if got := complete(t, root, "task", "show", "b2"); !slices.Equal(got, all[1:2]) {
		t.Errorf("prefix b2 offered %q", got)
	}
	// Only what the command can take: claim a TODO (or held) task, archive a DONE one.
	if got := complete(t, root, "task", "claim", ""); !slices.Equal(got, all[:2]) {
		t.Errorf("claim offered %q", got)
	}
	if got := complete(t, root, "task", "archive", ""); !slices.Equal(got, all[4:]) {
		t.Errorf("archive offered %q", got)
	}
	// One ID only.
	if got := complete(t, root, "task", "show", "a1b2c3", ""); len(got) != 0 {
		t.Errorf("second argument offered %q", got)
	}
	// --root is honoured; outside any workspace nothing is offered and nothing fails.
	elsewhere := t.TempDir()
	if got := complete(t, elsewhere, "--root", root, "task", "show", ""); !slices.Equal(got, all) {
		t.Errorf("--root: offered %q", got)
	}
	if got := complete(t, elsewhere, "task", "show", ""); len(got) != 0 {
		t.Errorf("outside a workspace: offered %q", got)
	}
}

// Rows as people write them (12-digit IDs, cells over several lines, rows
// that cannot be read) complete with every ID the read returns, each
// description on one line: a newline would break the shell's protocol.
func TestCompletionMessyMatrix(t *testing.T) {
	root := rowsWS(t, nil)
	code, out, _ := runCLI(t, root, cliOpts{}, "task", "list", "--json")
	var tasks []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &tasks); err != nil || len(tasks) < 3 {
		t.Fatalf("list: exit %d, %v, %d tasks", code, err, len(tasks))
	}
	got := complete(t, root, "task", "show", "")
	if len(got) != len(tasks) {
		t.Fatalf("offered %d IDs, the matrix has %d readable tasks:\n%q", len(got), len(tasks), got)
	}
	for i, g := range got {
		id, desc, ok := strings.Cut(g, "\t")
		if !ok || id != tasks[i].ID || desc == "" || strings.ContainsAny(desc, "\t\n") || utf8.RuneCountInString(desc) > cli.CompletionDescWidth {
			t.Errorf("completion %d: %q (task %s)", i, g, tasks[i].ID)
		}
	}
}

func TestCompletionModesAndSkills(t *testing.T) {
	root := fixtureWS(t)
	os.MkdirAll(filepath.Join(root, ".agent/skills/code-review"), 0o755)
	os.WriteFile(filepath.Join(root, ".agent/skills/code-review/SKILL.md"), []byte("---\nname: code-review\ndescription: Review a change\n---\nBody\n"), 0o644)
	names := func(got []string) []string {
		var out []string
		for _, g := range got {
			v, _, _ := strings.Cut(g, "\t")
			out = append(out, v)
		}
		return out
	}
	for _, args := range [][]string{{"task", "create", "--mode", ""}, {"task", "update", "a1b2c3", "--mode", ""}, {"dispatch", "a1b2c3", "--mode", ""}, {"prompt", "a1b2c3", "--mode", ""}} {
		if got := names(complete(t, root, args...)); !slices.Equal(got, []string{"coder", "explorer", "oracle", "reviewer"}) {
			t.Errorf("%q offered %q", args, got)
		}
	}
	if got := complete(t, root, "task", "create", "--mode", "rev"); len(got) != 1 || !strings.HasPrefix(got[0], "reviewer\t") {
		t.Errorf("--mode rev offered %q", got)
	}
	if got := names(complete(t, root, "task", "create", "--skills", "")); !slices.Equal(got, []string{"code-review", "go-testing"}) {
		t.Errorf("--skills offered %q", got)
	}
	// A comma list completes its last element and keeps the others.
	if got := complete(t, root, "task", "update", "a1b2c3", "--skills", "go-testing,c"); !slices.Equal(got, []string{"go-testing,code-review\tReview a change"}) {
		t.Errorf("--skills go-testing,c offered %q", got)
	}
	if got := names(complete(t, root, "skill", "load", "go-testing", "")); !slices.Equal(got, []string{"code-review"}) {
		t.Errorf("skill load offered %q", got)
	}
}

// cobra's completion command writes a script for each shell.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errOut := runCLI(t, t.TempDir(), cliOpts{}, "completion", sh)
		if code != 0 || !strings.Contains(out, "agentinfra") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, code, len(out), errOut)
		}
	}
}
