//go:build unix

package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Issue 18, item 4 (the fleet's part): a command killed between two of its
// steps. A helper process (this test binary again) runs Create or Start
// with a hook that, at the named point, says "ready" and waits to be
// killed; the test kills it with SIGKILL and runs the next command, which
// must finish or roll back what the killed one left, and say so. (The
// random kills of the real binary are cmd/agentinfra's crash tests.)

const crashHelperEnv = "FLEET_CRASH_HELPER"

func crashHelperMain() int {
	point := os.Getenv(crashHelperEnv)
	ws, err := workspace.New(os.Getenv("FLEET_ROOT"))
	if err != nil {
		fmt.Println("workspace:", err)
		return 1
	}
	f := New(ws, Options{SupervisorArgv: []string{os.Args[0]}, SupervisorEnv: []string{"FLEET_TEST_SUPERVISE=1"},
		Binary: os.Getenv("FLEET_STUB"), Env: strings.Fields(os.Getenv("FLEET_RUN_ENV"))})
	testHook = func(p string) {
		if p == point {
			fmt.Println("ready")
			time.Sleep(time.Hour) // until SIGKILL
		}
	}
	ctx := context.Background()
	name := os.Getenv("FLEET_NAME")
	switch os.Getenv("FLEET_OP") {
	case "create":
		_, err = f.Create(ctx, fleet.CreateInput{Name: name, Spec: "cut short"})
	case "start":
		_, err = f.Start(ctx, fleet.StartInput{Name: name, TaskID: os.Getenv("FLEET_TASK")})
	}
	fmt.Println("finished:", err)
	return 1
}

// killAt runs op in a helper process until it reaches point, then kills it
// with SIGKILL.
func killAt(t *testing.T, ws *workspace.Workspace, op, point, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), crashHelperEnv+"="+point, "FLEET_ROOT="+ws.Root, "FLEET_OP="+op, "FLEET_NAME="+name,
		"FLEET_STUB="+buildStub(t)), env...)
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
		_ = cmd.Wait()
		t.Fatalf("helper %s at %s: %q %v", op, point, line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper %s did not die by SIGKILL: %v", op, err)
	}
}

// oneNotice checks that the call reported exactly one notice, saying want.
func oneNotice(t *testing.T, n *fleet.Notices, want string) {
	t.Helper()
	if got := n.Texts(); len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("notices %q, want one saying %q", got, want)
	}
}

func branchExists(ws *workspace.Workspace, branch string) bool {
	return exec.Command("git", "-C", ws.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}

func worktrees(t *testing.T, ws *workspace.Workspace) string {
	t.Helper()
	return run(t, ws.Root, "git", "worktree", "list", "--porcelain")
}

// Killed after the name was taken, before the worktree (and again after
// the worktree, before the agent was ready): the next command, a list,
// rolls the creation back and says so; no folder, worktree or branch is
// left, and the name can be created again. The run left the name
// taken for good (list showed nothing, delete found no agent, create said
// taken).
func TestKilledCreateIsRolledBackByTheNextCommand(t *testing.T) {
	for _, point := range []string{"create:named", "create:worktree"} {
		t.Run(point, func(t *testing.T) {
			ws := newRepo(t)
			f := testFleet(t, ws, "STUB_MODE=ok")
			ctx := context.Background()
			killAt(t, ws, "create", point, "cut")
			wt := filepath.Join(filepath.Dir(ws.Root), "repo-agents", "cut")
			if point == "create:worktree" && !branchExists(ws, "agent/cut") {
				t.Fatal("the killed create had not made its branch yet")
			}
			nctx, notes := fleet.WithNotices(ctx)
			list, err := f.List(nctx, fleet.ListFilter{})
			if err != nil || len(list) != 0 {
				t.Fatalf("list after the kill = %v, %v", list, err)
			}
			oneNotice(t, notes, "agent cut's creation was interrupted")
			if _, err := os.Stat(f.p.agentDir("cut")); !os.IsNotExist(err) {
				t.Errorf("the agent's folder is still there: %v", err)
			}
			if _, err := os.Stat(wt); !os.IsNotExist(err) {
				t.Errorf("the worktree %s is still there: %v", wt, err)
			}
			if branchExists(ws, "agent/cut") {
				t.Error("the branch agent/cut is still there")
			}
			if wl := worktrees(t, ws); strings.Contains(wl, "cut") {
				t.Errorf("git still lists the worktree:\n%s", wl)
			}
			if _, err := f.Create(ctx, fleet.CreateInput{Name: "cut", Spec: "again"}); err != nil {
				t.Fatalf("the name is still blocked: %v", err)
			}
			waitStatus(t, f, "cut", fleet.StatusIdle)
		})
	}
}

// The leftover of a killed create is settled by whichever command comes
// next: show and delete find no agent, saying why; create of the same name
// goes ahead, its result warning of the rollback.
func TestKilledCreateIsSettledByShowDeleteAndCreate(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()

	killAt(t, ws, "create", "create:worktree", "one")
	nctx, notes := fleet.WithNotices(ctx)
	_, err := f.Show(nctx, "one")
	wantCode(t, err, fleet.CodeNotFound, "agent_name")
	if !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("show's error does not say the creation was rolled back: %v", err)
	}
	oneNotice(t, notes, "removed its worktree")

	killAt(t, ws, "create", "create:worktree", "two")
	nctx, notes = fleet.WithNotices(ctx)
	_, err = f.Delete(nctx, "two", false)
	wantCode(t, err, fleet.CodeNotFound, "agent_name")
	oneNotice(t, notes, "deleted its branch agent/two")

	killAt(t, ws, "create", "create:named", "three")
	nctx, notes = fleet.WithNotices(ctx)
	if _, err := f.Create(nctx, fleet.CreateInput{Name: "three", Spec: "s"}); err != nil {
		t.Fatalf("create over a killed create's leftover: %v", err)
	}
	oneNotice(t, notes, "agent three's creation was interrupted")
	waitStatus(t, f, "three", fleet.StatusIdle)
}

// A rollback never deletes a branch that holds work: a killed create whose
// branch got a commit (a setup command that commits, say) keeps it, and
// says so.
func TestKilledCreateKeepsABranchWithCommits(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	killAt(t, ws, "create", "create:worktree", "keep")
	wt := filepath.Join(filepath.Dir(ws.Root), "repo-agents", "keep")
	run(t, wt, "git", "commit", "-q", "--allow-empty", "-m", "work of its own")
	nctx, notes := fleet.WithNotices(context.Background())
	if list, err := f.List(nctx, fleet.ListFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("list = %v, %v", list, err)
	}
	oneNotice(t, notes, "kept its branch agent/keep")
	if !branchExists(ws, "agent/keep") {
		t.Error("the branch with a commit of its own was deleted")
	}
}

// matrixTask reads one task of the workspace's matrix.
func matrixTask(t *testing.T, ws *workspace.Workspace, id string) matrix.Task {
	t.Helper()
	d, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := d.Task(id)
	if !ok {
		t.Fatalf("no task %s", id)
	}
	return tk
}

// Killed after the claim, before the run's files and supervisor (and again
// after the supervisor was launched, before it was recorded): the row says
// IN_PROGRESS @agent with no run, which only a person could release before.
// The next command gives the task back (TODO, no agent) and says so; nothing
// ran, the run's files are gone, and the task can be started again.
func TestKilledStartGivesTheClaimBack(t *testing.T) {
	for _, point := range []string{"start:claimed", "start:launched"} {
		t.Run(point, func(t *testing.T) {
			ws := newRepo(t)
			argsFile := filepath.Join(t.TempDir(), "args")
			f := testFleet(t, ws, "STUB_MODE=ok", "STUB_ARGSFILE="+argsFile)
			ctx := context.Background()
			if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, f, "papi", fleet.StatusIdle)
			os.Remove(argsFile)
			killAt(t, ws, "start", point, "papi", "FLEET_TASK=c3c3c3", "FLEET_RUN_ENV=STUB_MODE=ok STUB_ARGSFILE="+argsFile)
			if tk := matrixTask(t, ws, "c3c3c3"); tk.Status != "IN_PROGRESS" || tasksvc.Holder(tk) != "@papi" {
				t.Fatalf("the killed start had not claimed the task: %s %v", tk.Status, tk.Agents)
			}
			nctx, notes := fleet.WithNotices(ctx)
			list, err := f.List(nctx, fleet.ListFilter{})
			if err != nil || len(list) != 1 || list[0].Status != fleet.StatusIdle || list[0].CurrentRun != nil {
				t.Fatalf("list after the kill = %+v, %v", list, err)
			}
			oneNotice(t, notes, "gave task c3c3c3 back (TODO again, no agent)")
			if tk := matrixTask(t, ws, "c3c3c3"); tk.Status != "TODO" || len(tk.Agents) != 0 {
				t.Errorf("the task was not given back: %s %v", tk.Status, tk.Agents)
			}
			if _, err := os.Stat(f.p.file("papi", runFile)); !os.IsNotExist(err) {
				t.Errorf("run.json is still there: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(f.p.runsDir("papi"), "papi-2.*")); len(left) != 0 {
				t.Errorf("the files of the run that never began are still there: %v", left)
			}
			for _, pid := range supervisorsOf(ws, "papi-2") { // launched, never recorded: it ends by itself
				waitGone(t, pid)
			}
			if _, err := os.Stat(argsFile); !os.IsNotExist(err) {
				t.Error("the agent CLI ran for a start that was killed")
			}
			if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"}); err != nil {
				t.Fatalf("start again: %v", err)
			}
			waitStatus(t, f, "papi", fleet.StatusIdle)
			if tk := matrixTask(t, ws, "c3c3c3"); tk.Status != "REVIEW" {
				t.Errorf("the task after its run is %s, want REVIEW", tk.Status)
			}
		})
	}
}

// supervisorsOf lists the supervisor processes of run runID in ws (on
// systems with /proc; none elsewhere).
func supervisorsOf(ws *workspace.Workspace, runID string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 4 && args[len(args)-1] == runID && args[len(args)-3] == ws.Root && pidAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// A task the agent held before the killed start (a person assigned it) is
// not taken from it: the rollback removes the run and leaves the claim.
func TestKilledStartLeavesAClaimTheAgentHadBefore(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	if _, err := tasksvc.Claim(ctx, ws, "c3c3c3", "@papi", time.Now()); err != nil {
		t.Fatal(err)
	}
	killAt(t, ws, "start", "start:claimed", "papi", "FLEET_TASK=c3c3c3", "FLEET_RUN_ENV=STUB_MODE=ok")
	nctx, notes := fleet.WithNotices(ctx)
	if _, err := f.Show(nctx, "papi"); err != nil {
		t.Fatal(err)
	}
	oneNotice(t, notes, "start of run papi-2")
	if tk := matrixTask(t, ws, "c3c3c3"); tk.Status != "IN_PROGRESS" || tasksvc.Holder(tk) != "@papi" {
		t.Errorf("the claim the agent had before was taken: %s %v", tk.Status, tk.Agents)
	}
}

// Leftovers of older agentinfra versions and of writes cut short: a folder
// without its record (what the killed create left), a folder being
// built aside, a temporary file of an atomic write. The next list settles
// each; the name is free.
func TestFolderWithoutItsRecordIsSettled(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(f.p.agentDir("ghost"), "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.p.agentDir("kept"), "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.p.file("kept", historyFile), []byte(`{"id":"kept-1","status":"completed"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(f.p.agentsDir(), stagingPrefix+"half")
	if err := os.MkdirAll(filepath.Join(staging, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	nctx, notes := fleet.WithNotices(ctx)
	list, err := f.List(nctx, fleet.ListFilter{})
	if err != nil || len(list) != 0 {
		t.Fatalf("list = %v, %v", list, err)
	}
	got := strings.Join(notes.Texts(), "\n")
	if !strings.Contains(got, "ghost had no agent record") || !strings.Contains(got, "removed it") ||
		!strings.Contains(got, "kept had no agent record") || !strings.Contains(got, "moved it") {
		t.Errorf("notices:\n%s", got)
	}
	if kept, _ := filepath.Glob(filepath.Join(f.p.archiveDir(), "kept-*-no-record", historyFile)); len(kept) != 1 {
		t.Errorf("the history of the folder without a record was not kept in the archive: %v", kept)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("the folder of a killed create is still there: %v", err)
	}
	for _, name := range []string{"ghost", "kept", "half"} {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: name, Spec: "s"}); err != nil {
			t.Errorf("create %s: %v", name, err)
		}
	}
	for _, name := range []string{"ghost", "kept", "half"} {
		waitStatus(t, f, name, fleet.StatusIdle)
	}
	tmp := filepath.Join(f.p.agentDir("ghost"), ".agent.json1234567")
	if err := os.WriteFile(tmp, []byte(`{"name":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Show(ctx, "ghost"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file of a killed write is still there: %v", err)
	}
}

// Issue 18, item 6: one agent whose record does not parse no longer fails
// the list of the whole fleet: the others are listed, it is named (as
// unreadable), show says what to do, and delete --force archives it.
func TestUnreadableRecordIsLeftOutAndNamed(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	for _, n := range []string{"alpha", "bravo", "charlie"} {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: n, Spec: "s"}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, f, n, fleet.StatusIdle)
	}
	if err := os.WriteFile(f.p.file("bravo", agentFile), []byte(`{"name": "bravo", "role": `), 0o644); err != nil {
		t.Fatal(err)
	}
	nctx, notes := fleet.WithNotices(ctx)
	list, err := f.List(nctx, fleet.ListFilter{})
	if err != nil {
		t.Fatalf("one broken record fails the list: %v", err)
	}
	if len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "charlie" {
		t.Errorf("listed %v, want alpha and charlie", list)
	}
	if u := notes.Unreadable(); len(u) != 1 || u[0] != "bravo" {
		t.Errorf("unreadable = %v, want [bravo]", u)
	}
	oneNotice(t, notes, "agent bravo is left out of the list")
	// A folder that is no agent's name does not fail the list either.
	if err := os.MkdirAll(filepath.Join(f.p.agentsDir(), "not_a_name"), 0o755); err != nil {
		t.Fatal(err)
	}
	nctx, notes = fleet.WithNotices(ctx)
	if list, err := f.List(nctx, fleet.ListFilter{}); err != nil || len(list) != 2 || len(notes.Unreadable()) != 2 {
		t.Errorf("list with a foreign folder = %v, %v, unreadable %v", list, err, notes.Unreadable())
	}
	os.Remove(filepath.Join(f.p.agentsDir(), "not_a_name"))
	_, err = f.Show(ctx, "bravo")
	wantCode(t, err, fleet.CodeUnavailable, "")
	if !strings.Contains(err.Error(), "agent delete bravo --force") {
		t.Errorf("show's error does not say what to do: %v", err)
	}
	_, err = f.Create(ctx, fleet.CreateInput{Name: "BRAVO", Spec: "s"})
	wantCode(t, err, fleet.CodeConflict, "name")
	if _, err := f.Delete(ctx, "bravo", false); err == nil {
		t.Error("delete without --force archived an unreadable agent")
	}
	nctx, notes = fleet.WithNotices(ctx)
	d, err := f.Delete(nctx, "bravo", true)
	if err != nil || !strings.HasSuffix(d.ArchivedTo, "-unreadable") || d.Branch != "agent/bravo" {
		t.Fatalf("delete --force = %+v, %v", d, err)
	}
	oneNotice(t, notes, "agent bravo's record could not be read: its worktree")
	if _, err := os.Stat(d.WorkspaceID); !os.IsNotExist(err) {
		t.Errorf("the worktree %s is still there: %v", d.WorkspaceID, err)
	}
	// The name is free, as after any delete: the branch is kept under an
	// archive name (issue 20).
	if !strings.HasPrefix(d.ArchivedBranch, "agent/bravo-archived-") || run(t, ws.Root, "git", "branch", "--list", d.ArchivedBranch) == "" {
		t.Errorf("the branch was not kept under an archive name: %+v", d)
	}
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "bravo", Spec: "s"}); err != nil {
		t.Errorf("the name is still taken after delete --force: %v", err)
	}
	waitStatus(t, f, "bravo", fleet.StatusIdle)
}

// Issue 18, item 6: a torn last line of the history (a write cut short)
// swallowed the next run's record. The next append sets it aside, keeps
// the record, and the run's record warns of it; a whole line that is no
// record (a person's edit) is left out of the history and reported.
// The history is in the store since schema v3; a torn line left in an old
// history.jsonl file is not read again and swallows nothing.
func TestTornHistoryLineDoesNotSwallowTheNextRun(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	hist := f.p.file("papi", historyFile)
	torn := `{"id":"papi-0","agent_name":"papi","summary":"cut sho`
	fh, err := os.OpenFile(hist, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(torn)
	fh.Close()
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", Text: "the next run"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	h, err := f.History(ctx, "papi", 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tasks) != 2 || h.Tasks[0].ID != "papi-2" || h.Tasks[1].ID != "papi-1" {
		t.Fatalf("history = %+v, want papi-2 and papi-1", h.Tasks)
	}
}

// A record whose last line is whole but for its newline is a record: the
// next append completes the line rather than setting it aside.
func TestHistoryLineMissingOnlyItsNewlineIsKept(t *testing.T) {
	p := filepath.Join(t.TempDir(), historyFile)
	if err := os.WriteFile(p, []byte(`{"id":"a-1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	torn, err := statefile.AppendLine(p, fleet.TaskRun{ID: "a-2"})
	if err != nil || torn != "" {
		t.Fatalf("append = %q, %v", torn, err)
	}
	runs, bad, err := statefile.ReadLinesReport[fleet.TaskRun](p)
	if err != nil || len(bad) != 0 || len(runs) != 2 || runs[0].ID != "a-1" || runs[1].ID != "a-2" {
		t.Errorf("runs %+v, bad lines %v, %v", runs, bad, err)
	}
}

// Issue 18, item 14: a fleet lock that is a folder was waited on and then
// blamed on "another agentinfra process"; it is refused at once, saying
// what it is. A lock that is a symbolic link is not followed.
func TestFleetLockThatIsNoFileIsRefusedAtOnce(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	if err := os.MkdirAll(f.p.fleetLock(), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"})
	wantCode(t, err, fleet.CodeUnavailable, "")
	if !strings.Contains(err.Error(), "is a folder: remove it") || strings.Contains(err.Error(), "another agentinfra process") ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a folder as the fleet lock: %v", err)
	}
	if _, err := os.Stat(f.p.agentDir("papi")); !os.IsNotExist(err) {
		t.Errorf("the refused create left its folder: %v", err)
	}
	os.Remove(f.p.fleetLock())

	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, f.p.fleetLock()); err != nil {
		t.Fatal(err)
	}
	_, err = f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"})
	wantCode(t, err, fleet.CodeUnavailable, "")
	if !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a symbolic link as the fleet lock: %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the lock was created at the link's target: %v", err)
	}
}

// Issue 18, item 14: a supervisor killed in the middle of a run left the
// role (the CLI's system prompt file, 0600) in the system's temp folder.
// The role file is the run's own, in its folder: nothing is written to
// the temp folder.
func TestKilledSupervisorLeavesNoRoleFileInTheTempFolder(t *testing.T) {
	ws := newRepo(t)
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "agents", "coder.md"), []byte("---\ndescription: codes\n---\nROLE: careful.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := New(ws, Options{
		SupervisorArgv: []string{os.Args[0]}, SupervisorEnv: []string{"FLEET_TEST_SUPERVISE=1", "TMPDIR=" + tmp},
		Binary: buildStub(t), Env: []string{"STUB_MODE=hang", "STUB_PIDFILE=" + pidFile}, KillGrace: 300 * time.Millisecond, StopGrace: 300 * time.Millisecond,
	})
	stopRunsAtCleanup(t, f)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "k9", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "k9", fleet.StatusBusy)
	readPid(t, pidFile)
	var rec runRecord
	statefile.ReadJSON(f.p.file("k9", runFile), &rec)
	if err := syscall.Kill(rec.Supervisor.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "k9", fleet.StatusIdle)
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the killed supervisor left %d file(s) in the temp folder: %v", len(left), left[0].Name())
	}
	fi, err := os.Stat(rec.SystemPromptFile)
	if err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(rec.SystemPromptFile) != f.p.runsDir("k9") {
		t.Errorf("the role file %s: %v %v, want 0600 in the run's folder", rec.SystemPromptFile, fi, err)
	}
}
