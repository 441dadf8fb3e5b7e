package full

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/mcpserver"
	"github.com/agentinfra/agentinfra/workspace"
)

// errorKindCase makes one kind of error happen through the CLI and through
// the MCP server, in the same workspace state.
type errorKindCase struct {
	kind agenterr.Kind
	// setup prepares a fresh workspace (nil: the fixture as it is); env is
	// the environment of both the CLI and the server.
	setup func(t *testing.T, root string)
	env   map[string]string
	args  []string       // the CLI command
	tool  string         // the MCP tool
	input map[string]any // its arguments
	// say is in both messages; field is the MCP parameter at fault.
	say, field string
}

var errorKindCases = []errorKindCase{
	{kind: agenterr.Invalid, args: []string{"task", "update", "a1b2c3", "--priority", "P9"},
		tool: "task", input: map[string]any{"action": "update", "id": "a1b2c3", "priority": "P9"},
		say: `"P9"`, field: "priority"},
	{kind: agenterr.NotFound, args: []string{"task", "show", "a1b2c4"},
		tool: "task", input: map[string]any{"action": "show", "id": "a1b2c4"},
		say: "did you mean a1b2c3?", field: "id"},
	{kind: agenterr.Conflict, args: []string{"task", "claim", "b2c3d4", "--agent", "@papi"},
		tool: "task", input: map[string]any{"action": "claim", "id": "b2c3d4", "agent": "@papi"},
		say: "held by @reviewer"},
	{kind: agenterr.Refused, args: []string{"task", "create", "-d", "x", "-m", "coder", "--skills", "go-testin"},
		tool: "task", input: map[string]any{"action": "create", "description": "x", "mode": "coder", "skills": []string{"go-testin"}},
		say: `unknown skill "go-testin"`, field: "skills"},
	{kind: agenterr.Unavailable, setup: holdMatrixLock, env: map[string]string{"AGENTINFRA_LOCK_TIMEOUT": "50ms"},
		args: []string{"task", "update", "a1b2c3", "--status", "DONE"},
		tool: "task", input: map[string]any{"action": "update", "id": "a1b2c3", "status": "DONE"},
		say: "timed out waiting for the matrix lock"},
	// No MCP tool decides a request (agents do not approve agents):
	// mcpserver's TestErrorResultOfEveryKind covers its MCP code.
	{kind: agenterr.Forbidden, setup: func(t *testing.T, root string) { seedSupervision(t, root) },
		env: map[string]string{"AGENTINFRA_USER": "mallory"}, args: []string{"approve", "1"},
		say: "@mallory may not decide request 1"},
	{kind: agenterr.Internal, setup: matrixIsAFolder, args: []string{"task", "show", "a1b2c3"},
		tool: "task", input: map[string]any{"action": "show", "id": "a1b2c3"},
		say: "is a directory"},
}

// holdMatrixLock takes the matrix lock for the rest of the test, as
// another agentinfra process would.
func holdMatrixLock(t *testing.T, root string) {
	f, err := os.OpenFile(filepath.Join(root, ".agent", ".DEVELOPMENT_MATRIX.md.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Skip("flock unavailable:", err)
	}
}

// matrixIsAFolder makes reading the matrix fail with an I/O error.
func matrixIsAFolder(t *testing.T, root string) {
	m := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	if err := os.Remove(m); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(m, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Each row of README's error table, through the CLI (exit code, the
// "error:" line), the CLI with --json (one JSON object on stderr with the
// same codes) and an MCP tool (isError, "CODE: message", the structured
// error): the same kind gives the same codes everywhere, and a failing
// command changes nothing.
func TestErrorKindsThroughCLIJSONAndMCP(t *testing.T) {
	rows := readmeErrorTable(t)
	for _, c := range errorKindCases {
		t.Run(string(c.kind), func(t *testing.T) {
			codes := agenterr.CodesOf(c.kind)
			if row, ok := rows[string(c.kind)]; !ok || row != [3]int{codes.Exit, codes.HTTP, codes.HTTP} {
				t.Fatalf("README's row for %s is %v (present %v); want exit %d, HTTP %d, MCP %d", c.kind, row, ok, codes.Exit, codes.HTTP, codes.HTTP)
			}
			delete(rows, string(c.kind))
			root := fixtureWS(t)
			if c.setup != nil {
				c.setup(t, root)
			}
			same := treehash.Guard(t, root)

			code, out, errOut := runCLI(t, root, cliOpts{Env: c.env}, c.args...)
			if code != codes.Exit || out != "" || !strings.HasPrefix(errOut, "error: ") || !strings.Contains(errOut, c.say) {
				t.Errorf("CLI %v: exit %d, stdout %q, stderr %q; want exit %d and an error saying %q", c.args, code, out, errOut, codes.Exit, c.say)
			}

			code, out, errOut = runCLI(t, root, cliOpts{Env: c.env}, append(c.args, "--json")...)
			var js struct {
				Error struct {
					Kind     string `json:"kind"`
					Code     int    `json:"code"`
					ExitCode int    `json:"exit_code"`
					Message  string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(errOut), &js); err != nil || code != codes.Exit || out != "" ||
				js.Error.Kind != string(c.kind) || js.Error.Code != codes.HTTP || js.Error.ExitCode != codes.Exit || !strings.Contains(js.Error.Message, c.say) {
				t.Errorf("CLI %v --json: exit %d, stdout %q, stderr %q (%v); want one JSON error of kind %s, code %d, exit_code %d", c.args, code, out, errOut, err, c.kind, codes.HTTP, codes.Exit)
			}

			if c.tool == "" {
				same()
				return
			}
			res := mcpCall(t, root, c.env, c.tool, c.input)
			var se struct {
				Error struct {
					Code    int    `json:"code"`
					Kind    string `json:"kind"`
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"error"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			text := ""
			if len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			if err := json.Unmarshal(b, &se); err != nil || !res.IsError || se.Error.Code != codes.HTTP || se.Error.Kind != string(c.kind) ||
				se.Error.Field != c.field || !strings.Contains(se.Error.Message, c.say) || text != strconv.Itoa(codes.HTTP)+": "+se.Error.Message {
				t.Errorf("MCP %s %v: isError %v, text %q, structured %s (%v); want code %d, kind %s, field %q, saying %q",
					c.tool, c.input, res.IsError, text, b, err, codes.HTTP, c.kind, c.field, c.say)
			}
			t.Logf("CLI: exit %d %s      MCP: %s", codes.Exit, strings.TrimSpace(strings.Split(errOut, "\n")[0]), text)
			same()
		})
	}
	// usage is the CLI's own: a command line it cannot parse.
	root := fixtureWS(t)
	code, _, errOut := runCLI(t, root, cliOpts{}, "task", "list", "--bogus", "--json")
	if code != 2 || !strings.Contains(errOut, `"kind":"usage"`) || !strings.Contains(errOut, `"exit_code":2`) {
		t.Errorf("usage --json: exit %d, stderr %q", code, errOut)
	}
	if row, ok := rows["usage"]; !ok || row[0] != 2 {
		t.Errorf("README's usage row %v (present %v); want exit 2", row, ok)
	}
	delete(rows, "usage")
	if len(rows) > 0 {
		t.Errorf("README's error table has rows no test covers: %v", rows)
	}
}

// mcpCall calls a tool of a server on root, over the in-memory transport.
func mcpCall(t *testing.T, root string, env map[string]string, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ws.Getenv = func(k string) string { return env[k] }
	srv, err := mcpserver.New(mcpserver.Options{Workspace: ws, Getenv: ws.Getenv, Now: func() time.Time { return taskNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

// readmeErrorTable reads README's error table: kind → exit code, HTTP
// status, MCP code ("usage" has no HTTP or MCP code: 0).
func readmeErrorTable(t *testing.T) map[string][3]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d+) \\| (\\d+|—) \\| (\\d+|—) \\|")
	out := map[string][3]int{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		var r [3]int
		for i, s := range m[2:5] {
			r[i], _ = strconv.Atoi(s)
		}
		out[m[1]] = r
	}
	if len(out) == 0 {
		t.Fatal("README has no error table (| `kind` | exit | HTTP | MCP | ...)")
	}
	return out
}

// Inputs the services refuse as invalid (issue 18: a model or session the
// agent CLI would read as an option, a context file that is no regular
// text file) exit 2, naming the flag, and with --json are kind invalid.
func TestRefusedInputsAreInvalid(t *testing.T) {
	root := fixtureWS(t)
	if err := os.Mkdir(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	same := treehash.Guard(t, root)
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"dispatch", "a1b2c3", "--model", "--dangerously-skip-permissions", "--dry-run"}, `invalid --model "--dangerously-skip-permissions": it cannot start with "-"`},
		{[]string{"prompt", "a1b2c3", "--context-file", "docs"}, `invalid --context-file "docs": it is a folder`},
	} {
		code, out, errOut := runCLI(t, root, cliOpts{}, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "error: "+c.say) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args, code, out, errOut, c.say)
		}
		code, _, errOut = runCLI(t, root, cliOpts{}, append(c.args, "--json")...)
		if code != 2 || !strings.HasPrefix(errOut, `{"error":{"kind":"invalid","code":400,"exit_code":2`) {
			t.Errorf("%v --json: exit %d, stderr %q", c.args, code, errOut)
		}
	}
	same()
}

// A fleet command that fails after it settled a killed command's leftovers
// says both: the warnings before the error line, or in the JSON error.
func TestReportErrorCarriesTheWarnings(t *testing.T) {
	err := cli.WithWarnings(agenterr.Conflictf("agent papi is busy"), []string{"agent tom's killed create was rolled back"})
	var b strings.Builder
	if code := cli.ReportError(&b, nil, err, false); code != 4 || b.String() != "warning: agent tom's killed create was rolled back\nerror: agent papi is busy\n" {
		t.Errorf("exit %d, stderr %q", code, b.String())
	}
	b.Reset()
	var js struct {
		Error struct {
			Kind     string   `json:"kind"`
			Warnings []string `json:"warnings"`
		} `json:"error"`
	}
	if code := cli.ReportError(&b, nil, err, true); code != 4 || json.Unmarshal([]byte(b.String()), &js) != nil || js.Error.Kind != "conflict" || len(js.Error.Warnings) != 1 {
		t.Errorf("--json: exit %d, stderr %q", code, b.String())
	}
}
