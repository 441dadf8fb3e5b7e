package full

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
)

// FuzzFixKeepsEveryCharacter checks the promise of `validate --fix` on any
// matrix: every non-space character of the file is still in the workspace
// afterwards, in the matrix or in a task README the fix wrote (--fix=move),
// and `task list --json` returns the same set of IDs. Inputs are bounded
// (fuzzFixMaxBytes) so that each run stays a few milliseconds.
//
//	go test ./cmd/agentinfra/internal/full -run x -fuzz FuzzFixKeepsEveryCharacter -fuzztime 1m
func FuzzFixKeepsEveryCharacter(f *testing.F) {
	modes := [][]string{{"validate", "--fix"}}
	if rwFixFlag(f) {
		modes = append(modes, []string{"validate", "--fix=move"})
	}
	seeds, _ := filepath.Glob(filepath.Join(realworldDir, "*", ".agent", "DEVELOPMENT_MATRIX.md"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "matrix", "testdata", "corpus", "*.md"))
	for _, p := range append(seeds, more...) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(src) > fuzzFixMaxBytes { // its first lines, whole
			src = src[:bytes.LastIndexByte(src[:fuzzFixMaxBytes], '\n')+1]
		}
		f.Add(src)
	}
	// Small shapes of continued rows people write.
	for _, s := range []string{
		"| ID | Status | Description |\n|---|---|---|\n| a1 | TODO | Repro:\n```sh\ncat x | wc -l\n| x | y |\n```\n|\n| b2 | DONE | ok |\n",
		"| ID | Status | Description | Created |\n|--|--|--|--|\n|  | TODO | no ID\n\n## Heading\nline \\\n| 2026-01-02 |\n| a1 | TODO | dup\n- x | 2026-01-02 |\n| a1 | TODO | dup again\n- y | 2026-01-02 |\n",
		"| ID | Status | Description |\r\n|--|--|--|\r\n| a1 | TODO | first\r\n\r\n- second |\r\n| b2 | TODO | fine\r\n",
		"| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | no closing pipe\ngoes on\n| b2 | TODO | `code | pipe` text \\| escaped |\n",
		// Issue 19: a code block closed on the row's last line, one that never
		// closes, <br> and inline code written by hand, backticks left open.
		"| ID | Status | Description | Created |\n|--|--|--|--|\n| a1 | TODO | Toast.\n\n```ts\nconst m = e?.message || '';\n```  | 2026-01-21 |\n| b2 | TODO | Copy:\n```diff\n- a\n| c3 | DONE | after | 2026-01-22 |\n",
		"| ID | Status | Description |\n|--|--|--|\n| a1 | TODO | Steps:<br>1. `a \\| b`<br><br>` ```sh `<br>`ls`<br>` ``` ` |\n| b2 | TODO | press ` then\nrun `x\ny` now |\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzFixMaxBytes {
			t.Skip("bounded: larger inputs add time, not shapes")
		}
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
			idsBefore, readBefore := fuzzListIDs(t, root)
			code, _, stderr := runCLI(t, root, cliOpts{}, args...)
			if code > 1 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			after := rwTreeSnapshot(t, root)
			if lost := rwLostCharacters(before, after); len(lost) > 0 {
				t.Fatalf("%s lost %v\n%s", strings.Join(args, " "), lost, rwTreeChanges(before, after))
			}
			idsAfter, readAfter := fuzzListIDs(t, root)
			if readBefore != readAfter || !slices.Equal(idsBefore, idsAfter) {
				t.Fatalf("%s: task list --json read %v %v before, %v %v after\n%s", strings.Join(args, " "),
					readBefore, idsBefore, readAfter, idsAfter, rwTreeChanges(before, after))
			}
		}
	})
}

const fuzzFixMaxBytes = 8 << 10

// fuzzListIDs is the sorted set of IDs `task list --json` returns, and
// whether it returned a list at all (a file with no task table does not).
func fuzzListIDs(t *testing.T, root string) ([]string, bool) {
	t.Helper()
	_, out, _ := runCLI(t, root, cliOpts{}, "task", "list", "--json")
	var tasks []matrix.Task
	if json.Unmarshal([]byte(out), &tasks) != nil {
		return nil, false
	}
	ids := rwTaskIDs(tasks)
	slices.Sort(ids)
	return slices.Compact(ids), true
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
