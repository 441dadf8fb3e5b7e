package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// deciding are the methods that decide for a person: the supervision
// service's changes and the store's compare-and-sets under them, and
// "approve always"'s policy write.
var deciding = map[string]bool{
	"Decide": true, "DecidePrompt": true, "DecideAlert": true, "AnswerPrompt": true, "AnswerAlert": true,
	"Steer": true, "MoveSession": true, "SetWatchdog": true, "SetWatchdogPaused": true, "SetChannel": true, "SetSessionChannel": true,
	"RestoreCheckpoint": true, "Purge": true, "WriteRule": true, "AddRule": true, "PlanAlways": true,
}

// Issue 27, "agents cannot decide": the MCP server is what agents call —
// `serve --toolsets agent` is meant to be run by agents — so no code of it
// (nor of the agent-side tools it serves) calls a method that decides
// for a person. An agent's MCP tools raise requests and read answers; a
// person answers them elsewhere.
func TestNoMCPCodeDecides(t *testing.T) {
	n := 0
	for _, dir := range []string{"mcpserver", "supervision/agentside"} {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			file, err := parser.ParseFile(fs, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			n++
			ast.Inspect(file, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && deciding[sel.Sel.Name] {
					t.Errorf("%s calls %s: no MCP tool may decide for a person", fs.Position(call.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
	if n < 20 {
		t.Fatalf("%d files under mcpserver/ and supervision/agentside/: not the module this test knows", n)
	}
	// The list has teeth: each name is declared where people's decisions
	// are made.
	declared := map[string]bool{}
	for _, dir := range []string{"supervision", "store", "supervision/policy"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		for _, f := range files {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok {
					declared[fn.Name.Name] = true
				}
			}
		}
	}
	for name := range deciding {
		if !declared[name] {
			t.Errorf("%s is declared nowhere in supervision/, store/ or supervision/policy: the list is out of date", name)
		}
	}
}
