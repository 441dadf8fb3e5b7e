package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzFixKeepsEveryCharacter checks the promise of `validate --fix` on any
// matrix: every non-space character of the file is still in the workspace
// afterwards, in the matrix or in a task README the fix wrote (--fix=move).
//
//	go test ./cmd/agentinfra -run x -fuzz FuzzFixKeepsEveryCharacter -fuzztime 1m
func FuzzFixKeepsEveryCharacter(f *testing.F) {
	modes := [][]string{{"validate", "--fix"}}
	if rwFixFlag(f) {
		modes = append(modes, []string{"validate", "--fix=move"})
	}
	seeds, _ := filepath.Glob(filepath.Join(realworldDir, "*", ".agent", "DEVELOPMENT_MATRIX.md"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "matrix", "testdata", "corpus", "*.md"))
	for _, p := range append(seeds, more...) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, args := range modes {
			root := t.TempDir()
			for rel, s := range map[string]string{".agent/agents/code.md": "code\n", ".agent/DEVELOPMENT_MATRIX.md": string(src)} {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := rwTreeSnapshot(t, root)
			runCLI(t, root, cliOpts{}, args...)
			after := rwTreeSnapshot(t, root)
			if lost := rwLostCharacters(before, after); len(lost) > 0 {
				t.Fatalf("%s lost %v\n%s", strings.Join(args, " "), lost, rwTreeChanges(before, after))
			}
		}
	})
}

// The check itself: text moved into a task README counts, text dropped or
// already in an unchanged README does not.
func TestRWLostCharacters(t *testing.T) {
	before := map[string]string{
		".agent/DEVELOPMENT_MATRIX.md": "| a1 | x y |\n1. step\n",
		".agent/tasks/a1_x/README.md":  "step\n",
		".agent/tasks/b2_y/README.md":  "1.\n",
	}
	moved := map[string]string{
		".agent/DEVELOPMENT_MATRIX.md": "| a1 | x<br>y |\n",
		".agent/tasks/a1_x/README.md":  "step\n\n1. step\n",
		".agent/tasks/b2_y/README.md":  "1.\n",
	}
	if got := rwLostCharacters(before, moved); len(got) != 0 {
		t.Errorf("moved text: lost %v, want none", got)
	}
	dropped := map[string]string{
		".agent/DEVELOPMENT_MATRIX.md": "| a1 | x y |\n",
		".agent/tasks/a1_x/README.md":  "step\n",
		".agent/tasks/b2_y/README.md":  "1.\n",
	}
	want := []string{"'.' ×1", "'1' ×1", "'e' ×1", "'p' ×1", "'s' ×1", "'t' ×1"}
	if got := rwLostCharacters(before, dropped); !reflect.DeepEqual(got, want) {
		t.Errorf("dropped text: lost %v, want %v", got, want)
	}
}
