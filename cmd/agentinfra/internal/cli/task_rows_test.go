package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
)

func TestCLITaskListReadProblems(t *testing.T) {
	root := rowsWS(t, nil)
	check := treehash.Guard(t, root)
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--json")
	if code != 1 {
		t.Errorf("exit %d, want 1 (rows could not be read)", code)
	}
	var tasks []matrix.Task
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	var ids []string
	for _, tk := range tasks {
		ids = append(ids, tk.ID)
	}
	if want := "260120204151 260120204152 260120204153 260121101500 260121101501 260121101502 260121101505 260121101506"; strings.Join(ids, " ") != want {
		t.Errorf("listed %v, want %s", ids, want)
	}
	if tasks[1].EndLine != 12 || !strings.Contains(tasks[1].Description, "\n2. Add jitter\n") {
		t.Errorf("continued row: %+v", tasks[1])
	}
	wantErr := ".agent/DEVELOPMENT_MATRIX.md:32:1: error: row of task 260121101503 has 9 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column\n" +
		".agent/DEVELOPMENT_MATRIX.md:33:1: error: row of task 260121101504 has 11 cells but the table header has 10, so it is not read; escape a | inside a cell as \\|, or give the row exactly one cell per column\n" +
		".agent/DEVELOPMENT_MATRIX.md:40:1: warning: lines 40-41 look like table rows but belong to no table (no header and |---| row above them)\n"
	// With --json the problems are the diagnostics of one JSON error on stderr.
	var je struct {
		Error struct {
			Kind        string              `json:"kind"`
			ExitCode    int                 `json:"exit_code"`
			Diagnostics []matrix.Diagnostic `json:"diagnostics"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(errOut), &je); err != nil || je.Error.ExitCode != 1 {
		t.Fatalf("stderr is not one JSON error (%v):\n%s", err, errOut)
	}
	var lines strings.Builder
	for _, d := range je.Error.Diagnostics {
		lines.WriteString(d.String() + "\n")
	}
	if lines.String() != wantErr {
		t.Errorf("diagnostics:\n%s\nwant\n%s", lines.String(), wantErr)
	}

	// A filter that drops rows before parsing reports the same problems.
	code, out, errOut = runCLI(t, root, cliOpts{}, "task", "list", "--status", "TODO")
	if code != 1 || errOut != wantErr {
		t.Errorf("list --status TODO: exit %d, stderr:\n%s", code, errOut)
	}
	var todo []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		todo = append(todo, strings.SplitN(l, "\t", 2)[0])
	}
	if strings.Join(todo, " ") != "260120204153 260121101500 260121101502 260121101506" || !strings.Contains(out, "\tPlan the storage layer  ## Notes  Postgres or SQLite? Decide after the spike.\t2026-01-21\t") {
		t.Errorf("TODO rows:\n%s", out)
	}

	// show: a continued row whole; an unreadable one says where and why.
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "show", "260121101500", "--json")
	if code != 0 || !strings.Contains(out, `"description": "Clean up logging:\n- drop the debug prints\n- use slog everywhere"`) {
		t.Errorf("show of a continued row: exit %d\n%s", code, out)
	}
	code, _, errOut = runCLI(t, root, cliOpts{}, "task", "show", "260121101504")
	if code != 1 || !strings.Contains(errOut, "task 260121101504 is on line 33 of the matrix but could not be read") {
		t.Errorf("show of an unreadable row: exit %d, stderr %q", code, errOut)
	}
	check()
}

func TestCLITaskListCleanMatrixExitsZero(t *testing.T) {
	root := rowsWS(t, []byte("| ID | Status | Description |\n|---|---|---|\n| 260120204151 | TODO | one\nline more |\n| 260120204152 | DONE | two |\n"))
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list")
	if code != 0 || errOut != "" || out != "260120204151\tTODO\t\t\t\t\t\tone line more\t\t\n260120204152\tDONE\t\t\t\t\t\ttwo\t\t\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// On a terminal, a person is told how to join the continued row.
	code, out, errOut = runCLI(t, root, cliOpts{TTY: true, Width: 120}, "task", "list")
	if code != 0 || !strings.Contains(out, "one line more") || errOut != "note: 1 row goes on over several lines; `agentinfra validate --fix` joins it into one line\n" {
		t.Errorf("tty: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCLITaskCreateAfterRowThatNeverEnds(t *testing.T) {
	root := rowsWS(t, []byte("| ID | Status | Mode | Description | Created | Updated |\n|---|---|---|---|---|---|\n| 260120204151 | TODO | coder | Starts\n\nand never ends\n"))
	check := treehash.Guard(t, root)
	code, _, errOut := runCLI(t, root, cliOpts{}, "task", "create", "--description", "new", "--mode", "coder")
	if code != 5 || !strings.Contains(errOut, "last row (line 3) never ends") || !strings.Contains(errOut, "agentinfra validate --fix") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	check()
}
