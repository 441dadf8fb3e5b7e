package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

// continuedMatrix has one row broken over lines, as people write it.
const continuedMatrix = `# Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1b2c3 | TODO | P1 | med | coder | go-testing | @coder | First task | 2026-01-02 | 2026-01-02 |
|260120204152| TODO |P2| med | coder |  |  | Retry uploads. They fail on flaky wifi
1. reproduce with ` + "`curl | tee`" + `
2. fix it
| 2026-01-20 | 2026-01-23 14:15:22 |
`

func TestValidateFixJoins(t *testing.T) {
	root := newValidateWorkspace(t, continuedMatrix)
	code, out, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix")
	want := "fixed 1 row: joined 260120204152 (lines 6-9)\nleft: no problems (2 tasks)\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("validate --fix = %d\nstdout %q\nstderr %q\nwant 0 and %q", code, out, errOut, want)
	}
	wantRow := "| 260120204152 | TODO | P2 | med | coder |  |  | Retry uploads. They fail on flaky wifi<br>1. reproduce with `curl \\| tee`<br>2. fix it | 2026-01-20 | 2026-01-23 14:15:22 |\n"
	if got := matrixOf(t, root); !strings.HasSuffix(got, wantRow) {
		t.Errorf("matrix after --fix:\n%s\nwant it to end with\n%s", got, wantRow)
	}
	// Fixed: validate passes, and a second --fix has nothing to do.
	if code, out, _ := runCLI(t, root, cliOpts{}, "validate"); code != 0 || out != "" {
		t.Errorf("validate after --fix = %d, %q", code, out)
	}
	check := treehash.Guard(t, root)
	code, out, _ = runCLI(t, root, cliOpts{}, "validate", "--fix")
	check()
	if code != 0 || !strings.HasPrefix(out, "nothing to fix: no row goes on over several lines") {
		t.Errorf("second --fix = %d, %q", code, out)
	}
}

func TestValidateFixDryRunWritesNothing(t *testing.T) {
	root := newValidateWorkspace(t, continuedMatrix)
	check := treehash.Guard(t, root)
	code, out, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix", "--dry-run")
	check()
	for _, want := range []string{
		"--- a/.agent/DEVELOPMENT_MATRIX.md\n+++ b/.agent/DEVELOPMENT_MATRIX.md\n@@ -3,7 +3,4 @@\n",
		"-|260120204152| TODO |P2| med | coder |  |  | Retry uploads. They fail on flaky wifi\n-1. reproduce with `curl | tee`\n-2. fix it\n-| 2026-01-20 | 2026-01-23 14:15:22 |\n+| 260120204152 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks\n%s\ngot\n%s", want, out)
		}
	}
	// The report goes to stderr: stdout is a patch and nothing else.
	if want := "would fix 1 row: join 260120204152 (lines 6-9)\nleft after the fix: no problems (2 tasks)\n"; !strings.Contains(errOut, want) || strings.Contains(out, "would fix") {
		t.Errorf("dry run: stderr %q, want it to hold %q (and stdout only the diff)", errOut, want)
	}
	if code != 0 {
		t.Errorf("exit %d, want 0: nothing would be left", code)
	}
}

// `validate --fix --dry-run | git apply` makes the fix (issue 19: the
// diagnostics once followed the diff on stdout and broke the patch).
func TestValidateFixDryRunPipesToGitApply(t *testing.T) {
	src := continuedMatrix + "| 0000ff | WRONG | P2 | med | coder |  |  | bad status | 2026-01-02 | 2026-01-02 |\n"
	root := newValidateWorkspace(t, src)
	_, patch, _ := runCLI(t, root, cliOpts{}, "validate", "--fix", "--dry-run")
	runCLI(t, root, cliOpts{}, "validate", "--fix")
	if got, want := gitApply(t, src, patch), matrixOf(t, root); got != want {
		t.Errorf("the dry run's stdout applied with git apply:\n%s\nwant what --fix writes:\n%s", got, want)
	}
}

func TestValidateFixMoveJSON(t *testing.T) {
	root := newValidateWorkspace(t, continuedMatrix)
	code, out, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix=move", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	var got struct {
		Summary string `json:"summary"`
		Mode    string `json:"mode"`
		Errors  int    `json:"errors"`
		Rows    []struct {
			ID, Action, Readme string
			Line               int `json:"line"`
			EndLine            int `json:"end_line"`
		} `json:"rows"`
		Files []struct {
			Path    string `json:"path"`
			Created bool   `json:"created"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	readme := ".agent/tasks/260120204152_retry_uploads_they_fail_on_flaky_wifi/README.md"
	if got.Mode != "move" || got.Errors != 0 || len(got.Rows) != 1 || got.Rows[0].Action != "moved" || got.Rows[0].Readme != readme ||
		len(got.Files) != 2 || got.Files[0].Path != readme || !got.Files[0].Created || got.Files[1].Path != ".agent/DEVELOPMENT_MATRIX.md" {
		t.Errorf("--json = %+v", got)
	}
	if want := "fixed 1 row: moved 260120204152 (lines 6-9) to " + readme; got.Summary != want {
		t.Errorf("summary %q, want %q", got.Summary, want)
	}
	if m := matrixOf(t, root); !strings.Contains(m, "|  |  | Retry uploads. | 2026-01-20 | 2026-01-23 14:15:22 |\n") {
		t.Errorf("the cell does not keep the first sentence:\n%s", m)
	}
}

// A row --fix cannot repair is named with its line and what to do, and the
// exit code says an error is left.
func TestValidateFixLeavesUnreadableRows(t *testing.T) {
	src := continuedMatrix + "| b2c3d4 | TODO | P1 | med | coder |  | a | b | forgot | one | cell | 2026-01-02 | 2026-01-02 |\n"
	root := newValidateWorkspace(t, src)
	code, out, _ := runCLI(t, root, cliOpts{}, "validate", "--fix")
	for _, want := range []string{
		"fixed 1 row: joined 260120204152 (lines 6-9)\n",
		".agent/DEVELOPMENT_MATRIX.md:7:1: error: row of task b2c3d4 has 13 cells but the table header has 10",
		"not fixed: line 7: the row cannot be read (see the error on line 7), so --fix cannot tell which | is text or which cell is missing; edit the line by hand\n",
		"left: 1 error, 0 warnings (2 tasks); repair the rows named above by hand, then run `agentinfra validate`\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks\n%s\ngot\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestValidateFixUsage(t *testing.T) {
	root := newValidateWorkspace(t, continuedMatrix)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--fix", "--staged"}, "--fix repairs the workspace's matrix"},
		{[]string{"validate", "--fix", ".agent/DEVELOPMENT_MATRIX.md"}, "cannot take --staged or FILE arguments"},
		{[]string{"validate", "--fix", "move"}, "write --fix=move, with '='"},
		{[]string{"validate", "--fix=copy"}, "--fix=copy: use --fix (join, the default) or --fix=move"},
		{[]string{"validate", "--dry-run"}, "--dry-run goes with --fix"},
	} {
		check := treehash.Guard(t, root)
		code, out, errOut := runCLI(t, root, cliOpts{}, tc.args...)
		check()
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v = %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	_, out, _ := runCLI(t, root, cliOpts{}, "validate", "--help")
	for _, want := range []string{"agentinfra validate --fix --dry-run", "agentinfra validate --fix=move --json", "<br>"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}
