// Package fleettest is the fleet's behaviour suite, one table of cases that
// every backend must pass (the local one in package fleet's tests, the
// Coder one against codertest in package coder's): what a user sees of
// create, start, stop, delete, roles, projects and history, and every error
// code, is the same whichever backend runs the agents.
package fleettest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// World is one backend under test with the world around it: the machine's
// processes for the local backend, the fake Coder and its clock for Coder.
type World interface {
	// Backend is the fleet under test.
	Backend() fleet.Backend
	// Workspace is the agentinfra workspace (its matrix is Matrix).
	Workspace() *workspace.Workspace
	// Step lets the world move on a little: the local backend's runs go on
	// for a moment; the fake Coder's clock moves one step.
	Step(t testing.TB)
	// AddRuns records n finished runs of agent name the way its backend
	// records runs, and returns their IDs, oldest first.
	AddRuns(t testing.TB, name string, n int) []string
	// Unavailable makes the backend fail one call as a backend that cannot
	// work does (503), and returns that call's error.
	Unavailable(t testing.TB) error
}

// Matrix is the matrix of every world: three TODO tasks, one waiting for
// another.
const Matrix = `# Development Matrix

| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated | Deps |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|------|
| a1a1a1 | TODO | P1 | med | coder |  |  | Implement the retry loop | 2026-11-01 | 2026-11-02 | - |
| b2b2b2 | TODO | P2 | easy | coder |  |  | Document the retry loop | 2026-11-01 | 2026-11-02 | a1a1a1 |
| c3c3c3 | TODO | P0 | easy |  |  |  | Fix the typo in README, which has been wrong since the first release and which people keep reporting | 2026-11-01 | 2026-11-02 |  |
`

// NewRepo makes a git repository with an initialized .agent/ workspace
// holding Matrix, committed on main.
func NewRepo(t testing.TB) *workspace.Workspace {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "config", "user.email", "t@example.com")
	git(t, root, "config", "user.name", "T")
	if _, err := tasksvc.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.MatrixPath(), []byte(Matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "init")
	return ws
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// WaitStatus lets the world move until agent name has one of the statuses.
func WaitStatus(t testing.TB, w World, name string, want ...fleet.Status) fleet.Agent {
	t.Helper()
	var last fleet.Agent
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		a, err := w.Backend().Show(context.Background(), name)
		if err != nil {
			t.Fatalf("show %s: %v", name, err)
		}
		for _, s := range want {
			if a.Status == s {
				return a
			}
		}
		last = a
		w.Step(t)
	}
	t.Fatalf("agent %s never became %v; it is %s (current task %+v)", name, want, last.Status, last.CurrentRun)
	return last
}

// WantCode fails unless err is a fleet error with code and (when given)
// field.
func WantCode(t testing.TB, err error, code int, field string) *agenterr.Error {
	t.Helper()
	var fe *agenterr.Error
	if !errors.As(err, &fe) {
		t.Fatalf("want a fleet error %d (%s), got %v", code, field, err)
	}
	if got := agenterr.HTTPStatus(fe); got != code || (field != "" && fe.Field != field) {
		t.Fatalf("want code %d field %q, got %d (%s) %q: %v", code, field, got, fe.Kind, fe.Field, err)
	}
	return fe
}

// TaskOf reads a matrix task of w.
func TaskOf(t testing.TB, w World, id string) matrix.Task {
	t.Helper()
	store, err := tasksvc.OpenStore(w.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := d.Task(id)
	if !ok {
		t.Fatalf("no task %s", id)
	}
	return tk
}
