package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/taskcontext"
	"github.com/agentinfra/agentinfra/workspace"
)

var fixedNow = time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)

func testGetenv(k string) string {
	switch {
	case k == "AGENTINFRA_GLOBAL_SKILLS":
		return "/nonexistent-global-skills"
	case strings.HasPrefix(k, "GEMINI_MODEL_"):
		return "" // the documented defaults
	}
	return os.Getenv(k)
}

const testSkill = `---
name: go-testing
description: Write table-driven Go tests with real files.
---
# Go testing

Use t.TempDir().

## Examples

go test ./...
`

// newWorkspace creates a workspace with agentinfra init, one skill and the
// given number of tasks (created through the scaffold package, as the CLI does).
func newWorkspace(t testing.TB, tasks int) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	ctx := context.Background()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	skillDir := filepath.Join(root, ".agent", "skills", "go-testing")
	if err := os.MkdirAll(skillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte(testSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		_, err := task.CreateTask(ctx, ws, task.CreateOptions{
			Description: "task number " + string(rune('a'+i%26)), Mode: "coder",
			Skills: []string{"go-testing"}, Getenv: testGetenv,
		}, fixedNow)
		if err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// connect starts a server on ws and connects an SDK client over the in-memory transport.
func connect(t testing.TB, ws *workspace.Workspace, copts *mcp.ClientOptions) (*Server, *mcp.ClientSession) {
	t.Helper()
	return connectProto(t, ws, copts, "")
}

// legacyProtocol is what today's clients (MCP inspector, Gemini CLI, Claude
// Code) negotiate: resources/subscribe instead of subscriptions/listen.
const legacyProtocol = "2025-06-18"

// connectProto is connect with a given protocol version ("" = the SDK's latest).
func connectProto(t testing.TB, ws *workspace.Workspace, copts *mcp.ClientOptions, proto string) (*Server, *mcp.ClientSession) {
	t.Helper()
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Now: func() time.Time { return fixedNow }, Toolsets: []string{ToolsetMatrix}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.StartWatching(ctx); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		srv.Close()
	})
	return srv, cs
}

// call calls a tool; a protocol error fails the test.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s %v: protocol error %v", name, args, err)
	}
	return res
}

// callOK calls a tool, requires success, checks the structured content against
// the tool's output schema and decodes it into out.
func callOK(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("call %s %v: tool error: %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	validateOutput(t, cs, name, b)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decode %s result: %v\n%s", name, err, b)
		}
	}
	if text(res) == "" {
		t.Errorf("call %s: no human-readable text", name)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// outputSchemas are the full schemas of the tools' structured results,
// inferred from their Go types with plain (non-null) list types. The server
// declares no outputSchema (see addTool); the tests hold every result to these.
var outputSchemas = map[string]func() (*jsonschema.Schema, error){
	"task":             fullOutputSchema[TaskOutput],
	"task_get_context": fullOutputSchema[taskcontext.Context],
	"skill":            fullOutputSchema[SkillOutput],
	"format_prompt":    fullOutputSchema[PromptOutput],
	"select_model":     fullOutputSchema[ModelOutput],
	"handoff_generate": fullOutputSchema[HandoffOutput],
	"dispatch_task":    fullOutputSchema[dispatch.Outcome],
}

func fullOutputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		return nil, err
	}
	plainTypes(s, false)
	return s, nil
}

// validateOutput checks a tool's structured content against the full schema
// of its Go result type.
func validateOutput(t testing.TB, cs *mcp.ClientSession, name string, content []byte) {
	t.Helper()
	findTool(t, cs, name) // registered
	schema, ok := outputSchemas[name]
	if !ok {
		t.Fatalf("%s: no entry in outputSchemas", name)
	}
	s, err := schema()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s output schema: %v", name, err)
	}
	var v any
	if err := json.Unmarshal(content, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Fatalf("%s structured content does not match the schema of its Go type: %v\n%s", name, err, content)
	}
}

func findTool(t testing.TB, cs *mcp.ClientSession, name string) *mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// treeHash hashes every path, mode and content under root.
func treeHash(t testing.TB, root string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		h.Write([]byte(rel + "\x00" + fi.Mode().String() + "\x00"))
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func loadTasks(t testing.TB, ws *workspace.Workspace) []matrix.Task {
	t.Helper()
	d, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d.Tasks()
}

// errMessage is a tool error's message: its text without the "CODE: "
// prefix, which must be the structured error's code.
func errMessage(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var se struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &se); err != nil || se.Error.Code == 0 {
		t.Errorf("a tool error without a structured error: %s (%v)", b, err)
		return text(res)
	}
	prefix := fmt.Sprintf("%d: ", se.Error.Code)
	if !strings.HasPrefix(text(res), prefix) || strings.TrimPrefix(text(res), prefix) != se.Error.Message {
		t.Errorf("tool error text %q is not %q + the structured message %q", text(res), prefix, se.Error.Message)
	}
	return strings.TrimPrefix(text(res), prefix)
}

// serverWS is the workspace as the server's own process finds it: a
// Workspace of its own, which reads the config file when the server
// starts (the test's ws may have read it before the test wrote it).
func serverWS(t testing.TB, ws *workspace.Workspace) *workspace.Workspace {
	t.Helper()
	fresh, err := workspace.New(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Getenv = testGetenv
	return fresh
}
