package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

const vocabConfig = `# workspace config
models:
  fast: gemini-2.5-flash
matrix:
  statuses: [Open, Doing, Done]
  difficulties: [S, M, L]
  aliases:
    status: { WIP: Doing, "in review": Doing }
    difficulty: { medium: M, small: S }
  canonicalize: true
`

// newVocabWorkspace makes a workspace with a matrix and, if config != "", a config file.
func newVocabWorkspace(t *testing.T, matrixSrc, config string) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ws.AgentDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.MatrixPath(), []byte(matrixSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func TestOpenStoreUsesTheConfig(t *testing.T) {
	ctx := context.Background()
	const src = "| ID | Status | Pri | Diff | Description | Updated |\n|---|---|---|---|---|---|\n" +
		"| T-1 | Open | P2 | S | first | 2026-01-02 |\n"
	ws := newVocabWorkspace(t, src, vocabConfig)
	if _, err := OpenStore(ws); err != nil {
		t.Fatal(err)
	}
	r, err := UpdateTask(ctx, ws, "T-1", matrix.Update{Status: matrix.Str("wip"), Difficulty: matrix.Str("medium")}, now, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "| T-1 | Open | P2 | S | first | 2026-01-02 |", "| T-1 | Doing | P2 | M | first | 2026-11-21 |", 1)
	if got, _ := os.ReadFile(ws.MatrixPath()); string(got) != want || r.After.Status != "Doing" {
		t.Errorf("after update:\n%s\nwant:\n%s", got, want)
	}
	// A value the config does not allow is refused and changes nothing.
	before, _ := os.ReadFile(ws.MatrixPath())
	if _, err := UpdateTask(ctx, ws, "T-1", matrix.Update{Status: matrix.Str("TODO")}, now, UpdateOptions{}); !errors.Is(err, matrix.ErrInvalid) {
		t.Errorf("TODO with statuses Open, Doing, Done: %v", err)
	}
	if after, _ := os.ReadFile(ws.MatrixPath()); string(after) != string(before) {
		t.Error("a refused update changed the file")
	}
	// New rows get the vocabulary's defaults: its first status, its middle difficulty.
	c, err := CreateTask(ctx, ws, CreateOptions{Description: "second"}, now)
	created := c.Task
	if err != nil || created.ID != "T-2" || created.Status != "Open" || created.Difficulty != "M" || created.Priority != "P2" {
		t.Errorf("created %+v, %v", created, err)
	}
	// A broken config is an error naming the file, not a silent default.
	if err := os.WriteFile(ws.ConfigPath(), []byte("matrix:\n  statuses: oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ = workspace.New(ws.Root) // the next process: a workspace reads its config once
	if _, err := OpenStore(ws); !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), ".agent/config.yaml:2:13: matrix.statuses") {
		t.Errorf("OpenStore with a broken config: %v", err)
	}
}

func TestValidateFindsFoldersOfAnyID(t *testing.T) {
	const src = "| ID | Status | Mode | Skills | Description |\n|---|---|---|---|---|\n" +
		"| 260120204151 | IN_PROGRESS | - | - | has a folder |\n" +
		"| TASK-7 | IN_PROGRESS | - | — | no folder |\n"
	ws := newVocabWorkspace(t, src, "")
	for _, dir := range []string{"260120204151_fix_the_parser", "TASK-9_orphan"} {
		if err := os.MkdirAll(filepath.Join(ws.TasksDir(), dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []string
	for _, dg := range Validate(ws, matrix.Parse([]byte(src)), "M.md", func(string) string { return "" }) {
		msgs = append(msgs, dg.Message)
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{
		"task TASK-7 is IN_PROGRESS but has no folder .agent/tasks/TASK-7_*",
		"task folder .agent/tasks/TASK-9_orphan has no row in the matrix",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("validate lacks %q; got:\n%s", want, got)
		}
	}
	if len(msgs) != 2 {
		t.Errorf("want 2 warnings (none for dashes or 260120204151), got:\n%s", got)
	}
}
