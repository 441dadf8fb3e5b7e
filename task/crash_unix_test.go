//go:build unix

package task

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// The boundary tests kill a process exactly between the two files of a
// change (the random kills of cmd/agentinfra's crash tests find the same
// windows by chance): a helper process (this test binary again) runs the
// operation with a hook that, once the first file is written, says "ready"
// and waits to be killed. The next operation must then roll the change back
// and say so.

const crashHelperEnv = "TASK_CRASH_HELPER"

func TestCrashHelperProcess(t *testing.T) {
	mode := os.Getenv(crashHelperEnv)
	if mode == "" {
		t.Skip("helper process for the boundary crash tests")
	}
	ws, err := workspace.New(os.Getenv("TASK_ROOT"))
	if err != nil {
		t.Fatal(err)
	}
	hang := func() error {
		fmt.Println("ready")
		select {} // until SIGKILL
	}
	ctx := context.Background()
	switch mode {
	case "create":
		testHookBeforeWrite = hang
		_, err = CreateTask(ctx, ws, CreateOptions{Description: "killed while created", Mode: "coder"}, now)
	case "update":
		testHookBeforeWrite = hang
		_, err = SetStatus(ctx, ws, os.Getenv("TASK_ID"), "BLOCKED", now)
	case "archive":
		testHookMoved = func(n int) error {
			if n == 2 {
				return hang()
			}
			return nil
		}
		_, err = ArchiveAllDone(ctx, ws)
	}
	fmt.Println("finished:", err)
	os.Exit(1)
}

// killAtBoundary runs mode in a helper process until it says "ready", then
// kills it with SIGKILL.
func killAtBoundary(t *testing.T, ws *workspace.Workspace, mode string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), crashHelperEnv+"="+mode, "TASK_ROOT="+ws.Root), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper %s: %q %v", mode, line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper %s did not die by SIGKILL: %v", mode, err)
	}
	if _, err := os.Stat(filepath.Join(ws.AgentDir(), JournalRel)); err != nil {
		t.Fatalf("the killed %s left no journal: %v", mode, err)
	}
}

func onlyWarning(t *testing.T, warnings []string, want string) {
	t.Helper()
	if len(warnings) != 1 || !strings.Contains(warnings[0], want) {
		t.Errorf("warnings %q, want one saying %q", warnings, want)
	}
}

func assertNoJournal(t *testing.T, ws *workspace.Workspace) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ws.AgentDir(), JournalRel)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is still there: %v", err)
	}
}

// Killed after the task folder was placed, before the row was written: the
// next write removes the folder and says so.
func TestKilledCreateIsRolledBackByTheNextWrite(t *testing.T) {
	ws := newWS(t)
	by, _, err := createTask(context.Background(), ws, CreateOptions{Description: "bystander", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	killAtBoundary(t, ws, "create")
	if dirs, _ := filepath.Glob(filepath.Join(ws.TasksDir(), "*_killed_while_created")); len(dirs) != 1 {
		t.Fatalf("the killed create placed %v", dirs)
	}
	res, err := UpdateTask(context.Background(), ws, by.ID, matrixUpdatePriority("P3"), now, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onlyWarning(t, res.Warnings, "interrupted `task create`")
	if dirs, _ := filepath.Glob(filepath.Join(ws.TasksDir(), "*_killed_while_created")); len(dirs) != 0 {
		t.Errorf("the orphan folder is still there: %v", dirs)
	}
	assertNoJournal(t, ws)
}

// Killed after the README got its status line, before the row was written:
// the next write takes the line out again.
func TestKilledUpdateIsRolledBackByTheNextWrite(t *testing.T) {
	ws := newWS(t)
	by, _, _ := createTask(context.Background(), ws, CreateOptions{Description: "bystander", Mode: "coder"}, now)
	tk, dir, err := createTask(context.Background(), ws, CreateOptions{Description: "the one killed", Mode: "coder"}, now)
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "README.md")
	before := readFile(t, readme)
	killAtBoundary(t, ws, "update", "TASK_ID="+tk.ID)
	if readFile(t, readme) == before {
		t.Fatal("the killed update had not written the README yet")
	}
	res, err := UpdateTask(context.Background(), ws, by.ID, matrixUpdatePriority("P3"), now, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onlyWarning(t, res.Warnings, "interrupted status change of task "+tk.ID)
	if got := readFile(t, readme); got != before {
		t.Errorf("the README keeps the line of a change that was not made:\n%s", got)
	}
	assertNoJournal(t, ws)
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".README.md*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// Killed after two of three folders were archived: the next write moves
// them back (all or none) and says so; archiving again moves all three.
func TestKilledArchiveIsRolledBackByTheNextWrite(t *testing.T) {
	ws := newWS(t)
	ctx := context.Background()
	by, _, _ := createTask(ctx, ws, CreateOptions{Description: "bystander", Mode: "coder"}, now)
	for i := range 3 {
		tk, _, err := createTask(ctx, ws, CreateOptions{Description: fmt.Sprintf("done %d", i), Mode: "coder"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SetStatus(ctx, ws, tk.ID, "DONE", now); err != nil {
			t.Fatal(err)
		}
	}
	killAtBoundary(t, ws, "archive")
	if a, _ := os.ReadDir(ws.ArchiveDir()); len(a) != 2 {
		t.Fatalf("the killed archive moved %d folders, want 2", len(a))
	}
	res, err := UpdateTask(ctx, ws, by.ID, matrixUpdatePriority("P3"), now, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onlyWarning(t, res.Warnings, "interrupted `task archive`")
	if a, _ := os.ReadDir(ws.ArchiveDir()); len(a) != 0 {
		t.Errorf("%d folders still archived after the rollback", len(a))
	}
	assertNoJournal(t, ws)
	moved, err := ArchiveAllDone(ctx, ws)
	if err != nil || len(moved) != 3 {
		t.Errorf("archive again: %d moved, %v", len(moved), err)
	}
}

func matrixUpdatePriority(p string) matrix.Update { return matrix.Update{Priority: &p} }
