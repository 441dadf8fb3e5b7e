package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every kind of event the bus carries has a reader: production code
// outside package events names it where it picks events (a subscription's
// filter, a switch case, a comparison), not only where it publishes one. A
// kind nobody reads is removed, or given a reader.
func TestEveryEventKindHasAReader(t *testing.T) {
	fset := token.NewFileSet()
	decl, err := parser.ParseFile(fset, "../../events/events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{} // name → read somewhere
	for _, d := range decl.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Kind" {
				for _, n := range vs.Names {
					kinds[n.Name] = false
				}
			}
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found %d event kinds in events/events.go: the file is not what this test knows", len(kinds))
	}
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "events" || rel == "internal/testing" || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var picks []ast.Expr
			switch n := n.(type) {
			case *ast.CaseClause:
				picks = n.List
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					picks = []ast.Expr{n.X, n.Y}
				}
			case *ast.CompositeLit: // []events.Kind{…}
				if at, ok := n.Type.(*ast.ArrayType); ok && isEventsSel(at.Elt, "Kind") {
					picks = n.Elts
				}
			}
			for _, e := range picks {
				if sel, ok := e.(*ast.SelectorExpr); ok && isEventsSel(sel, sel.Sel.Name) {
					if _, known := kinds[sel.Sel.Name]; known {
						kinds[sel.Sel.Name] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, read := range kinds {
		if !read {
			t.Errorf("events.%s is published but nothing reads it: remove it or give it a reader (a subscription that picks it)", k)
		}
	}
}

// isEventsSel reports whether e is events.name.
func isEventsSel(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "events"
}
