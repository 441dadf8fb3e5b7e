package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// realWorldMatrix is written the way people write theirs: 12-digit timestamp
// IDs, their own difficulty words, '-' and '—' for empty cells, an extra
// column, dates as YYMMDD or with a time, uneven padding.
const realWorldMatrix = `# Dev matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Research | Description | Created | Updated |
|---|---|---|---|---|---|---|---|---|---|---|
| 260116093000 | DONE | P2 | M | code | - | - | - | Set up the repo | 2026-01-16 | 2026-01-16 09:30:00 |
|260118101010|IN_PROGRESS|P1|L|agent|-|@claude|notes.md|Parser for the old format|260118|260119|
| 260120204151 | TODO | - | medium | code | — | - | - | Write the docs   | 2026-01-20 14:18:12 | 2026-01-23 14:18:12 |
`

func realWorldWS(t *testing.T, config string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{".agent/DEVELOPMENT_MATRIX.md": realWorldMatrix}
	if config != "" {
		files[".agent/config.yaml"] = config
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCLIRealWorldValues(t *testing.T) {
	dir := realWorldWS(t, "")
	code, out, errs := runCLI(t, dir, cliOpts{}, "task", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var tasks []struct {
		ID, Status, Priority, Difficulty, Mode, Updated string
		Skills, Agents                                  []string
		Extra                                           map[string]string
	}
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range tasks {
		got = append(got, strings.Join([]string{tk.ID, tk.Status, tk.Priority, tk.Difficulty, tk.Mode,
			strings.Join(tk.Skills, ","), strings.Join(tk.Agents, ","), tk.Extra["Research"]}, "/"))
	}
	want := "260116093000/DONE/P2/med/code///" + " " +
		"260118101010/IN_PROGRESS/P1/hard/agent//@claude/notes.md" + " " +
		"260120204151/TODO//med/code///"
	if strings.Join(got, " ") != want {
		t.Errorf("list:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}

	// validate: no errors for these values (warnings for the modes that have no file).
	code, out, errs = runCLI(t, dir, cliOpts{}, "validate")
	if code != 0 || strings.Contains(out+errs, "error:") || !strings.Contains(out+errs, `mode "code" has no .agent/agents/code.md`) {
		t.Errorf("validate: exit %d\n%s%s", code, out, errs)
	}

	// An alias on the command line is written as its value; Updated keeps
	// its time; the dash in Agents is replaced, not kept.
	code, _, errs = runCLI(t, dir, cliOpts{}, "task", "update", "260120204151", "--status", "in progress", "--difficulty", "XL", "--agent", "coder")
	if code != 0 {
		t.Fatalf("update: exit %d: %s", code, errs)
	}
	wantRow := "| 260120204151 | IN_PROGRESS | - | hard | code | — | @coder | - | Write the docs   | 2026-01-20 14:18:12 | 2026-11-21 14:05:00 |"
	if m := matrixOf(t, dir); m != strings.Replace(realWorldMatrix, "| 260120204151 | TODO | - | medium | code | — | - | - | Write the docs   | 2026-01-20 14:18:12 | 2026-01-23 14:18:12 |", wantRow, 1) {
		t.Errorf("after update:\n%s", m)
	}
	// YYMMDD stays YYMMDD.
	if code, _, errs = runCLI(t, dir, cliOpts{}, "task", "update", "260118101010", "--set", "Research=-"); code != 0 {
		t.Fatalf("update: exit %d: %s", code, errs)
	}
	if m := matrixOf(t, dir); !strings.Contains(m, "|260118101010|IN_PROGRESS|P1|L|agent|-|@claude|-|Parser for the old format|260118|261121|") {
		t.Errorf("YYMMDD row:\n%s", m)
	}

	// A new row gets the next timestamp ID.
	code, out, errs = runCLI(t, dir, cliOpts{}, "task", "create", "-d", "Third thing", "-m", "code", "--difficulty", "S") // rows use mode code: no --force needed
	if code != 0 || !strings.Contains(out, "261121140500") {
		t.Fatalf("create: exit %d: %s%s", code, out, errs)
	}
	if m := matrixOf(t, dir); !strings.HasSuffix(m, "| 261121140500 | TODO | P2 | easy | code |  |  |  | Third thing | 2026-11-21 | 2026-11-21 |\n") {
		t.Errorf("after create:\n%s", m)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agent/tasks/261121140500_third_thing/README.md")); err != nil {
		t.Errorf("task folder: %v", err)
	}
}

func TestCLIVocabularyConfig(t *testing.T) {
	const config = "models:\n  fast: gemini-2.5-flash\nmatrix:\n  statuses: [TODO, IN_PROGRESS, DONE]\n  aliases:\n    status: {underway: IN_PROGRESS}\n"
	dir := realWorldWS(t, config)
	code, out, errs := runCLI(t, dir, cliOpts{}, "task", "list", "--status", "underway")
	if code != 0 || !strings.HasPrefix(out, "260118101010") || strings.Count(out, "\n") != 1 {
		t.Errorf("list --status underway: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, dir, cliOpts{}, "task", "update", "260120204151", "--status", "underway")
	if code != 0 || !strings.Contains(matrixOf(t, dir), "| 260120204151 | IN_PROGRESS |") {
		t.Errorf("update --status underway: exit %d %s", code, errs)
	}
	// REVIEW is not in this workspace's list: refused, naming the list and its file.
	unchanged := treehash.Guard(t, dir)
	code, _, errs = runCLI(t, dir, cliOpts{}, "task", "update", "260120204151", "--status", "REVIEW")
	if code != 2 || !strings.Contains(errs, `invalid --status "REVIEW": unknown status (the values come from .agent/config.yaml); valid: TODO, IN_PROGRESS, DONE`) {
		t.Errorf("update --status REVIEW: exit %d %s", code, errs)
	}
	unchanged()

	// A broken matrix section: every command says where, and changes nothing.
	if err := os.WriteFile(filepath.Join(dir, ".agent/config.yaml"), []byte("matrix:\n  statuses: [TODO]\n  aliases:\n    difficulty: {M: medium}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged = treehash.Guard(t, dir)
	for _, args := range [][]string{{"task", "list"}, {"task", "update", "260120204151", "--status", "DONE"}, {"validate"}, {"task", "show", "260120204151"}} {
		code, _, errs := runCLI(t, dir, cliOpts{}, args...)
		if code != 2 || !strings.Contains(errs, `.agent/config.yaml:4:17: matrix.aliases.difficulty: difficulty alias "M" → "medium": "medium" is not one of easy, med, hard`) {
			t.Errorf("%v with a broken config: exit %d %q", args, code, errs)
		}
	}
	unchanged()
}
