package dispatch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

const dispatchMatrix = `# Development Matrix

Notes people keep above the table.

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1a1a1 | TODO | P1 | med | coder |  | @alice | Implement the retry loop | 2026-11-01 | 2026-11-02 |
| b2b2b2 | DONE | P2 | easy | coder |  |  | Finished work | 2026-11-01 | 2026-11-03 |
| c3c3c3 | IN_PROGRESS | P2 | hard | oracle |  | @oracle | Someone is on it | 2026-11-01 | 2026-11-04 |
| d4d4d4 | BLOCKED | P3 | easy | explorer |  |  | Look around the repo | 2026-11-01 | 2026-11-05 |

Trailing prose | with a pipe that is not a row.
`

var fixedNow = time.Date(2026, 11, 21, 12, 30, 0, 0, time.UTC)

// dispatchWorkspace makes a workspace with the matrix above; a1a1a1 has a
// task folder with a README, the others have none.
func dispatchWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	if _, err := tasksvc.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	fakemodel.WriteFile(t, ws.MatrixPath(), dispatchMatrix)
	dir := filepath.Join(ws.TasksDir(), "a1a1a1_implement-the-retry-loop")
	fakemodel.WriteFile(t, filepath.Join(dir, "README.md"), "# Implement the retry loop\n\nRetry 3 times with backoff.\n")
	if err := os.MkdirAll(filepath.Join(dir, "tracking"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

func stubOptions(bin, id string, env ...string) Options {
	return Options{
		ID: id, Binary: bin, Env: env, Now: func() time.Time { return fixedNow },
		Getenv: func(string) string { return "" }, KillGrace: 300 * time.Millisecond,
	}
}

func readMatrix(t *testing.T, ws *workspace.Workspace) []byte {
	t.Helper()
	b, err := os.ReadFile(ws.MatrixPath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkMatrix asserts the matrix still validates and that, compared line by
// line with before, only the row of id changed (or nothing, when id is "").
func checkMatrix(t *testing.T, before, after []byte, id string) {
	t.Helper()
	if ds := matrix.Parse(after).Diagnostics(); len(ds) > 0 {
		t.Errorf("the matrix no longer validates: %v", ds)
	}
	bl, al := bytes.Split(before, []byte("\n")), bytes.Split(after, []byte("\n"))
	if len(bl) != len(al) {
		t.Fatalf("the matrix went from %d to %d lines", len(bl), len(al))
	}
	changed := 0
	for i := range bl {
		if bytes.Equal(bl[i], al[i]) {
			continue
		}
		changed++
		if id == "" || !bytes.HasPrefix(bl[i], []byte("| "+id+" |")) {
			t.Errorf("line %d changed and is not the row of %q:\n- %s\n+ %s", i+1, id, bl[i], al[i])
		}
	}
	if id != "" && changed != 1 {
		t.Errorf("%d lines changed, want exactly the row of %s", changed, id)
	}
}

func taskOf(t *testing.T, ws *workspace.Workspace, id string) matrix.Task {
	t.Helper()
	task, ok := matrix.Parse(readMatrix(t, ws)).Task(id)
	if !ok {
		t.Fatalf("task %s vanished", id)
	}
	return task
}

func readRel(t *testing.T, ws *workspace.Workspace, rel string) string {
	t.Helper()
	if rel == "" {
		t.Fatal("no file recorded")
	}
	b, err := os.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
