package cli

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/treehash"
)

func TestCLITaskList(t *testing.T) {
	root := fixtureWS(t)
	check := treehash.Guard(t, root)
	defer check()

	// Piped: tab-separated, no header, file order.
	code, out, _ := runCLI(t, root, cliOpts{}, "task", "list", "--status", "TODO,in_progress")
	want := "a1b2c3\tTODO\tP2\tmed\tcoder\tgo-testing\t@coder\tAdd retry to the fetcher\t2026-11-01\t2026-11-02\n" +
		"b2c3d4\tIN_PROGRESS\tP1\thard\tcoder\t\t@coder @reviewer\tMake the store lock fair under heavy contention from many writers\t2026-10-01\t2026-11-20\n"
	if code != 0 || out != want {
		t.Errorf("list piped:\n%q\nwant:\n%q", out, want)
	}
	for _, c := range []struct {
		args []string
		ids  string
	}{
		{[]string{"--priority", "P1,P2"}, "a1b2c3 b2c3d4 d4e5f6"},
		{[]string{"--mode", "coder"}, "a1b2c3 b2c3d4"},
		{[]string{"--agent", "reviewer"}, "b2c3d4 d4e5f6"},
		{[]string{"--skill", "go-testing"}, "a1b2c3 d4e5f6"},
		{[]string{"--query", "LOCK"}, "b2c3d4 d4e5f6"},
		{[]string{"--sort", "priority"}, "b2c3d4 a1b2c3 d4e5f6 c3d4e5 e5f6a7"},
		{[]string{"--sort", "created", "--limit", "2"}, "e5f6a7 c3d4e5"},
		{[]string{"--sort", "updated", "-n", "1"}, "b2c3d4"},
		{[]string{"--status", "review", "--mode", "coder"}, ""},
	} {
		code, out, errOut := runCLI(t, root, cliOpts{}, append([]string{"task", "list"}, c.args...)...)
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if l != "" {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		if code != 0 || strings.Join(got, " ") != c.ids {
			t.Errorf("list %v = %v (exit %d, %s), want %s", c.args, got, code, errOut, c.ids)
		}
	}

	// Terminal: aligned table, description cut to the width, colour unless NO_COLOR.
	code, out, _ = runCLI(t, root, cliOpts{TTY: true, Width: 110, Env: map[string]string{"NO_COLOR": "1"}}, "task", "list", "--priority", "P1,P2")
	wantTable := "" +
		"ID      STATUS       PRI  DIFF  MODE      SKILLS      AGENTS            UPDATED     DESCRIPTION\n" +
		"a1b2c3  TODO         P2   med   coder     go-testing  @coder            2026-11-02  Add retry to the fetcher\n" +
		"b2c3d4  IN_PROGRESS  P1   hard  coder                 @coder @reviewer  2026-11-20  Make the store lock fair …\n" +
		"d4e5f6  REVIEW       P2   med   reviewer  go-testing  @reviewer         2026-11-19  Review the lock code\n"
	if code != 0 || out != wantTable {
		t.Errorf("list on a terminal:\n%s\nwant:\n%s", out, wantTable)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := len([]rune(l)); n > 110 {
			t.Errorf("line is %d wide, terminal is 110: %q", n, l)
		}
	}
	_, colored, _ := runCLI(t, root, cliOpts{TTY: true, Width: 110}, "task", "list", "--priority", "P1,P2")
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	if !ansi.MatchString(colored) || ansi.ReplaceAllString(colored, "") != wantTable {
		t.Errorf("coloured table differs from the plain one once escapes are removed:\n%q", colored)
	}
	if _, piped, _ := runCLI(t, root, cliOpts{}, "task", "list"); ansi.MatchString(piped) {
		t.Error("colour escapes in piped output")
	}
	// Width 0 (unknown): nothing is cut.
	if _, out, _ := runCLI(t, root, cliOpts{TTY: true, Env: map[string]string{"NO_COLOR": "1"}}, "task", "list", "--status", "IN_PROGRESS"); !strings.Contains(out, "from many writers\n") {
		t.Errorf("unknown width cut the description:\n%s", out)
	}
	// Nothing matches: a note on stderr on a terminal, nothing when piped.
	if code, out, errOut := runCLI(t, root, cliOpts{TTY: true}, "task", "list", "--query", "nothing-like-this"); code != 0 || out != "" || !strings.Contains(errOut, "no tasks match") {
		t.Errorf("empty tty list: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--query", "nothing-like-this"); code != 0 || out != "" || errOut != "" {
		t.Errorf("empty piped list: %d %q %q", code, out, errOut)
	}

	// --json: an array with stable snake_case fields; [] when empty.
	code, out, _ = runCLI(t, root, cliOpts{}, "task", "list", "--status", "DONE", "--json")
	var arr []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &arr) != nil || len(arr) != 1 {
		t.Fatalf("list --json: %d %s", code, out)
	}
	var keys []string
	for k := range arr[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, ",") != "agents,created,description,difficulty,id,line,mode,priority,skills,status,updated" {
		t.Errorf("JSON fields: %v", keys)
	}
	if arr[0]["id"] != "e5f6a7" || arr[0]["line"] != float64(11) {
		t.Errorf("JSON row: %v", arr[0])
	}
	if code, out, _ := runCLI(t, root, cliOpts{TTY: true}, "task", "list", "--status", "REVIEW", "--mode", "oracle", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("empty --json = %q", out)
	}
}
