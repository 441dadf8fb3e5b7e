package local

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/store"
)

func TestCreateGoesBusyThenIdleWithTheSpecRunCompleted(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=1500", "STUB_RESPONSE=spec done")
	ctx := context.Background()
	a, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the tests green"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != fleet.StatusStarting && a.Status != fleet.StatusBusy {
		t.Fatalf("right after create the agent is %s, want starting or busy", a.Status)
	}
	if a.CurrentRun == nil || a.CurrentRun.Summary != "keep the tests green" {
		t.Fatalf("current task = %+v", a.CurrentRun)
	}
	busy := waitStatus(t, f, "papi", fleet.StatusBusy)
	if busy.CurrentRun == nil || busy.CurrentRun.Status != fleet.RunRunning {
		t.Fatalf("busy agent's current task = %+v", busy.CurrentRun)
	}
	idle := waitStatus(t, f, "papi", fleet.StatusIdle)
	if idle.CurrentRun != nil {
		t.Fatalf("idle agent has a current task %+v", idle.CurrentRun)
	}
	h, err := f.History(ctx, "papi", 1, fleet.DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount != 1 || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[0].SessionID != "stub-session-1" || h.Tasks[0].CompletedAt == nil {
		t.Fatalf("history = %+v", h)
	}
	// The worktree is outside the repository, on agent/papi, from main.
	wt := idle.Workspace.Path
	if strings.HasPrefix(wt, ws.Root+string(filepath.Separator)) {
		t.Fatalf("worktree %s is inside the repository", wt)
	}
	if got := run(t, wt, "git", "rev-parse", "--abbrev-ref", "HEAD"); got != "agent/papi" {
		t.Fatalf("worktree branch = %s", got)
	}
	// The fleet's files are not seen by git.
	if out := run(t, ws.Root, "git", "status", "--porcelain"); out != "" {
		t.Fatalf("git sees fleet files:\n%s", out)
	}
	// The next run resumes the session.
	argsFile := filepath.Join(t.TempDir(), "args")
	f2 := testFleet(t, ws, "STUB_MODE=ok", "STUB_ARGSFILE="+argsFile)
	if _, err := f2.Start(ctx, fleet.StartInput{Name: "papi", Text: "now add a test"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f2, "papi", fleet.StatusIdle)
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "--resume\x00stub-session-1") {
		t.Fatalf("second run did not resume the session: %q", args)
	}
	for _, want := range []string{"now add a test", "You are agent papi", "keep the tests green", "branch agent/papi"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("the prompt lacks %q: %q", want, args)
		}
	}
}

func TestCreateRefusesBadInputAndLeavesNothing(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "Papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	before, err := treehash.Snapshot(filepath.Dir(ws.Root))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in    fleet.CreateInput
		code  int
		field string
	}{
		{fleet.CreateInput{Name: "", Spec: "s"}, 400, "name"},
		{fleet.CreateInput{Name: "-papi", Spec: "s"}, 400, "name"},
		{fleet.CreateInput{Name: "pa--pi", Spec: "s"}, 400, "name"},
		{fleet.CreateInput{Name: "papi_2", Spec: "s"}, 400, "name"},
		{fleet.CreateInput{Name: "abcdefghijklmnopqrstu", Spec: "s"}, 400, "name"},
		{fleet.CreateInput{Name: "sony", Spec: "  "}, 400, "spec"},
		{fleet.CreateInput{Name: "sony", Spec: "s", Role: "pilot"}, 400, "role"},
		{fleet.CreateInput{Name: "sony", Spec: "s", Project: "nowhere"}, 404, "project"},
		{fleet.CreateInput{Name: "sony", Spec: "s", CLI: "vim"}, 400, "cli"},
		{fleet.CreateInput{Name: "PAPI", Spec: "s"}, 409, ""},
	}
	for _, c := range cases {
		_, err := f.Create(ctx, c.in)
		wantCode(t, err, c.code, c.field)
	}
	// An unknown role is said once, with the roles there are (issue 19:
	// the cause repeated the message).
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "sony", Spec: "s", Role: "pilot"}); err == nil ||
		err.Error() != `unknown role "pilot": the roles are coder, explorer, oracle, reviewer (.agent/agents/{role}.md)` {
		t.Errorf("unknown role: %v", err)
	}
	after, _ := treehash.Snapshot(filepath.Dir(ws.Root))
	for p, h := range after {
		if before[p] != h {
			t.Errorf("a refused create changed or added %s", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("a refused create removed %s", p)
		}
	}
}

func TestStartWhileBusyIsRefusedAndConcurrentStartsHaveOneWinner(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "sony", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "sony", fleet.StatusIdle)

	slow := testFleet(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=3000")
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = slow.Start(ctx, fleet.StartInput{Name: "sony", Text: "task"})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantCode(t, err, fleet.CodeConflict, "")
	}
	if wins != 1 {
		t.Fatalf("%d of %d concurrent starts won, want exactly 1", wins, n)
	}
	_, err := slow.Start(ctx, fleet.StartInput{Name: "sony", Text: "one more"})
	wantCode(t, err, fleet.CodeConflict, "")
	waitStatus(t, f, "sony", fleet.StatusIdle)
	h, _ := f.History(ctx, "sony", 1, 100)
	if h.TotalCount != 2 {
		t.Fatalf("history has %d runs, want 2 (spec + the winner)", h.TotalCount)
	}
}

func TestStopOfAHangingRunLeavesNoProcess(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := testFleet(t, ws, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile, "STUB_IGNORE_TERM=1")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "hang", Spec: "never ends"}); err != nil {
		t.Fatal(err)
	}
	busy := waitStatus(t, f, "hang", fleet.StatusBusy)
	grandchild := readPid(t, pidFile)
	var rec runRecord
	statefile.ReadJSON(f.p.file("hang", runFile), &rec)
	// The supervisor has read the CLI's session line before the stop (on a
	// loaded machine it may still be on its way through the pipe).
	if !poll.Until(30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(f.p.runsDir("hang"), rec.ID+".log.jsonl"))
		return strings.Contains(string(b), "hang-1")
	}) {
		t.Log("the session line was not seen within 30 s; stopping anyway")
	}
	tr, err := f.Stop(ctx, "hang")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != fleet.RunStopped || tr.ID != busy.CurrentRun.ID {
		t.Fatalf("stopped run = %+v", tr)
	}
	a, _ := f.Show(ctx, "hang")
	if a.Status != fleet.StatusIdle {
		t.Fatalf("after stop the agent is %s, want idle", a.Status)
	}
	for _, pid := range []int{grandchild, rec.Child.PID, rec.Supervisor.PID} {
		waitGone(t, pid)
	}
	var ar agentRecord
	statefile.ReadJSON(f.p.file("hang", agentFile), &ar)
	if ar.Sessions["gemini"] != "hang-1" {
		t.Fatalf("the session was not kept: %v", ar.Sessions)
	}
	_, err = f.Stop(ctx, "hang")
	wantCode(t, err, fleet.CodeConflict, "")
}

func TestKilledSupervisorLeavesTheRunFailedAndTheAgentIdle(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := testFleet(t, ws, "STUB_MODE=hang", "STUB_PIDFILE="+pidFile)
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "k9", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "k9", fleet.StatusBusy)
	grandchild := readPid(t, pidFile)
	var rec runRecord
	statefile.ReadJSON(f.p.file("k9", runFile), &rec)
	if err := syscall.Kill(rec.Supervisor.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a := waitStatus(t, f, "k9", fleet.StatusIdle)
	if a.CurrentRun != nil {
		t.Fatalf("current task = %+v", a.CurrentRun)
	}
	h, _ := f.History(ctx, "k9", 1, 20)
	if h.Tasks[0].Status != fleet.RunFailed || !strings.HasPrefix(h.Tasks[0].ExitReason, "interrupted") {
		t.Fatalf("run after the supervisor's death = %+v", h.Tasks[0])
	}
	// The agent CLI the supervisor left behind is killed with it.
	waitGone(t, rec.Child.PID)
	waitGone(t, grandchild)
}

// Issue 33: a supervisor killed between its run's end and the end's
// booking — held there by the matrix's lock, which the task's move waits
// for — leaves a run the next command books as it ended: completed, its
// task in REVIEW by its agent, not an interrupted run.
func TestASupervisorKilledAfterItsRunEndedBooksTheRunAsItEnded(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	// On a detached HEAD the fleet records no change for review, which
	// would wait for the matrix's lock before the run's end.
	if out, err := exec.Command("git", "-C", ws.Root, "checkout", "-q", "--detach").CombinedOutput(); err != nil {
		t.Fatalf("git checkout --detach: %v\n%s", err, out)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_GATE="+gate)
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "k9", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "k9", fleet.StatusIdle)
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Start(ctx, fleet.StartInput{Name: "k9", TaskID: "a1a1a1"}); err != nil {
		t.Fatal(err)
	}
	var rec runRecord
	poll.Eventually(t, func() bool {
		ok, _ := statefile.ReadJSON(f.p.file("k9", runFile), &rec)
		return ok && rec.Child.PID != 0
	}, "the run's CLI did not start")
	mlock := flock.New(matrix.NewStore(ws.MatrixPath()).LockPath())
	if err := mlock.Lock(); err != nil {
		t.Fatal(err)
	}
	defer mlock.Unlock()
	if err := os.WriteFile(gate, nil, 0o644); err != nil { // the CLI ends
		t.Fatal(err)
	}
	poll.Eventually(t, func() bool {
		prev, _ := f.storedRecord(ctx, rec.ID)
		return prev != nil && prev.Concluded()
	}, "the run did not end")
	if err := syscall.Kill(rec.Supervisor.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, rec.Supervisor.PID)
	mlock.Unlock()
	if task, _ := loadDoc(t, ws).Task("a1a1a1"); task.Status != "IN_PROGRESS" {
		t.Fatalf("the task moved before the kill: %s", task.Status)
	}

	waitStatus(t, f, "k9", fleet.StatusIdle)
	h, _ := f.History(ctx, "k9", 1, 20)
	if h.Tasks[0].Status != fleet.RunCompleted || !strings.Contains(h.Tasks[0].ExitReason, "task a1a1a1 is REVIEW") {
		t.Errorf("the run after its supervisor's death = %+v, want completed, the task in REVIEW", h.Tasks[0])
	}
	if task, _ := loadDoc(t, ws).Task("a1a1a1"); task.Status != "REVIEW" || strings.Join(task.Agents, " ") != "@k9" {
		t.Errorf("task after the run: %s %v", task.Status, task.Agents)
	}
}

func TestTwoAgentsClaimingOneTaskHaveOneWinner(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	for _, n := range []string{"papi", "sony"} {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: n, Spec: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	waitStatus(t, f, "sony", fleet.StatusIdle)
	slow := testFleet(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=300")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, n := range []string{"papi", "sony"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = slow.Start(ctx, fleet.StartInput{Name: n, TaskID: "a1a1a1"})
		}()
	}
	wg.Wait()
	winner, loser := 0, 1
	if errs[0] != nil {
		winner, loser = 1, 0
	}
	if errs[winner] != nil {
		t.Fatalf("no winner: %v", errs)
	}
	wantCode(t, errs[loser], fleet.CodeConflict, "task_id")
	names := []string{"papi", "sony"}
	waitStatus(t, f, names[winner], fleet.StatusIdle)
	d := loadDoc(t, ws)
	task, _ := d.Task("a1a1a1")
	if task.Status != "REVIEW" || strings.Join(task.Agents, " ") != "@"+names[winner] {
		t.Fatalf("task after the run: %s %v", task.Status, task.Agents)
	}
	for _, dg := range d.Diagnostics() {
		if dg.Severity == matrix.SeverityError {
			t.Fatalf("matrix invalid: %v", dg)
		}
	}
	h, _ := f.History(ctx, names[winner], 1, 20)
	if h.Tasks[0].TaskID != "a1a1a1" || h.Tasks[0].Status != fleet.RunCompleted {
		t.Fatalf("winner's run = %+v", h.Tasks[0])
	}
	prompt, _ := os.ReadFile(filepath.Join(f.p.runsDir(names[winner]), h.Tasks[0].ID+".prompt.md"))
	for _, want := range []string{"Implement the retry loop", "You are agent " + names[winner]} {
		if !strings.Contains(string(prompt), want) {
			t.Errorf("the task's prompt lacks %q:\n%s", want, prompt)
		}
	}
	// --next takes the highest-priority ready task: c3c3c3 (P0); b2b2b2
	// waits for a1a1a1, which is in REVIEW, not DONE.
	if _, err := slow.Start(ctx, fleet.StartInput{Name: names[loser], Next: true}); err != nil {
		t.Fatal(err)
	}
	a, _ := f.Show(ctx, names[loser])
	if a.CurrentRun == nil || a.CurrentRun.TaskID != "c3c3c3" {
		t.Fatalf("--next took %+v, want c3c3c3", a.CurrentRun)
	}
	waitStatus(t, f, names[loser], fleet.StatusIdle)
}

func loadDoc(t testing.TB, ws interface{ MatrixPath() string }) *matrix.Doc {
	t.Helper()
	d, err := matrix.NewStore(ws.MatrixPath()).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDeleteRefusesUncommittedChangesUnlessForced(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok")
	a, err := f.Create(ctx, fleet.CreateInput{Name: "del", Spec: "s"})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "del", fleet.StatusIdle)
	if err := os.WriteFile(filepath.Join(a.Workspace.Path, "wip.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.Delete(ctx, "del", false)
	wantCode(t, err, fleet.CodeConflict, "")
	if e := agenterr.As(err); e.Override != "force" {
		t.Errorf("the refusal names no override: %+v", e)
	}
	if _, err := os.Stat(a.Workspace.Path); err != nil {
		t.Fatalf("a refused delete removed the worktree: %v", err)
	}
	if got, _ := f.Show(ctx, "del"); got.Status != fleet.StatusIdle {
		t.Fatalf("after a refused delete the agent is %s", got.Status)
	}
	res, err := f.Delete(ctx, "del", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Workspace.Path); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	if out := run(t, ws.Root, "git", "branch", "--list", res.ArchivedBranch); res.ArchivedBranch == "" || !strings.Contains(out, res.ArchivedBranch) {
		t.Fatalf("the branch was not kept (archived as %q)", res.ArchivedBranch)
	}
	var archived []store.RunRow
	f.withRuns(ctx, func(st *store.Store) error {
		archived, err = st.Runs(ctx, store.RunFilter{Archived: filepath.Base(res.ArchivedTo)})
		return err
	})
	if len(archived) == 0 || archived[0].Agent != "del" {
		t.Fatalf("history not archived: %+v %v", archived, err)
	}
	_, err = f.Show(ctx, "del")
	wantCode(t, err, fleet.CodeNotFound, "agent_name")
	// The name is free again (TestDeletedAgentsNameIsFreeAndItsWorkKept).
}

func TestNamesFromInputNeverLeaveTheFleetFolder(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=ok")
	ctx := context.Background()
	for _, name := range []string{"../../etc", "a/b", "..", ""} {
		_, err := f.Show(ctx, name)
		wantCode(t, err, fleet.CodeBadInput, "agent_name")
		_, err = f.Start(ctx, fleet.StartInput{Name: name, Text: "x"})
		wantCode(t, err, fleet.CodeBadInput, "agent_name")
		_, err = f.Delete(ctx, name, true)
		wantCode(t, err, fleet.CodeBadInput, "agent_name")
		_, err = f.History(ctx, name, 1, 20)
		wantCode(t, err, fleet.CodeBadInput, "agent_name")
	}
}

// An agent CLI that ignores SIGINT and SIGTERM (and whose child inherits
// that) is killed by the last step of stop.
func TestStopEscalatesToKill(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := filepath.Join(dir, "gemini")
	body := "#!/bin/sh\ntrap '' INT TERM\necho '{\"type\":\"init\",\"session_id\":\"deaf-1\",\"model\":\"m\"}'\nsleep 1000 &\necho $! > " + pidFile + "\nwait\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	f := testFleet(t, ws)
	f.opts.Binary = script
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "deaf", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "deaf", fleet.StatusBusy)
	sleeper := readPid(t, pidFile)
	tr, err := f.Stop(ctx, "deaf")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != fleet.RunStopped {
		t.Fatalf("run = %+v", tr)
	}
	waitGone(t, sleeper)
	if a, _ := f.Show(ctx, "deaf"); a.Status != fleet.StatusIdle {
		t.Fatalf("agent is %s", a.Status)
	}
}

// A project filter that names no project (nor any agent's) is a 404 that
// lists the projects; a known project without agents is an empty list.
func TestListUnknownProjectFilter(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws)
	ctx := context.Background()
	_, err := f.List(ctx, fleet.ListFilter{Project: "nowhere"})
	wantCode(t, err, fleet.CodeNotFound, "project_filter")
	if !strings.Contains(err.Error(), "repo") {
		t.Errorf("the error does not list the projects: %v", err)
	}
	as, err := f.List(ctx, fleet.ListFilter{Project: "REPO"})
	if err != nil || len(as) != 0 {
		t.Fatalf("known project: %v, %v", as, err)
	}
}

// A run's agent CLI learns which agent it is (AGENTINFRA_AGENT), so the
// agentinfra commands it runs can record "agent" as their source.
func TestRunEnvironmentNamesTheAgent(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws, "STUB_MODE=crash", "STUB_ECHO_ENV="+fleet.EnvAgent)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "Papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	h, err := f.History(ctx, "papi", 1, fleet.DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.storedRecord(ctx, h.Tasks[0].ID)
	if err != nil || rec == nil {
		t.Fatalf("the run's record: %v", err)
	}
	res, _ := json.Marshal(rec)
	if r := h.Tasks[0]; r.Status != fleet.RunFailed || !strings.Contains(string(res), fleet.EnvAgent+"=Papi") {
		t.Fatalf("the run's environment did not name the agent: %+v\n%s", r, res)
	}
}

// A project at another path takes its roles from its own .agent/agents/
// (list_agent_roles {project}); without any, it shares the fleet's.
func TestRolesComeFromTheProject(t *testing.T) {
	ws := newRepo(t)
	f := testFleet(t, ws)
	ctx := context.Background()
	web := filepath.Join(t.TempDir(), "web")
	if err := os.MkdirAll(filepath.Join(web, ".agent", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(web, ".agent", "agents", "designer.md"), []byte("---\ndescription: Draws the pages\n---\nYou design pages.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir() // a project with no modes of its own
	cfg := "projects:\n  - name: web\n    path: " + web + "\n  - name: bare\n    path: " + bare + "\n"
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	names := func(project string) []string {
		t.Helper()
		roles, err := f.Roles(ctx, project)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range roles {
			out = append(out, r.Name)
		}
		return out
	}
	if got := names("web"); !slices.Equal(got, []string{"designer"}) {
		t.Errorf("roles of web = %v, want its own [designer]", got)
	}
	if got, own := names("bare"), names(""); !slices.Equal(got, own) || slices.Contains(got, "designer") {
		t.Errorf("roles of bare = %v, want the fleet's %v", got, own)
	}
	// Creating in the main project with web's role is refused, naming the main project's roles.
	_, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s", Role: "designer", Source: fleet.SourceHuman})
	wantCode(t, err, fleet.CodeBadInput, "role")
}

// The role's text reaches the agent CLI as its system prompt (gemini's
// GEMINI_SYSTEM_MD file: private, the run's own file in its folder, never a
// temporary file that a killed supervisor would leave), for the spec's run
// and for a matrix task, and is not in the prompt.
func TestRoleIsTheSystemPromptNotThePrompt(t *testing.T) {
	ws := newRepo(t)
	role := "ROLE-MARK-91e: you are the careful coder.\nSmall commits."
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "agents", "coder.md"), []byte("---\ndescription: codes\n---\n\n"+role+"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info := filepath.Join(t.TempDir(), "fileinfo")
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_FILEINFO_ENV=GEMINI_SYSTEM_MD", "STUB_FILEINFO="+info)
	ctx := context.Background()
	check := func(runID, wantInPrompt string) {
		t.Helper()
		raw, err := os.ReadFile(info)
		if err != nil {
			t.Fatal(err)
		}
		path, rest, _ := strings.Cut(string(raw), "\n")
		perm, content, _ := strings.Cut(rest, "\n")
		if perm != "600" || content != role {
			t.Errorf("run %s: the CLI's system prompt file had mode %s and content %q, want 600 and the role", runID, perm, content)
		}
		if want := filepath.Join(f.p.runsDir("papi"), runID+".system.md"); path != want {
			t.Errorf("run %s: the system prompt file is %s, want the run's own %s", runID, path, want)
		}
		prompt, err := os.ReadFile(filepath.Join(f.p.runsDir("papi"), runID+".prompt.md"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(prompt), "ROLE-MARK") || strings.Contains(string(prompt), "# Agent mode") || !strings.Contains(string(prompt), wantInPrompt) {
			t.Errorf("run %s: the prompt should hold %q and not the role:\n%s", runID, wantInPrompt, prompt)
		}
	}
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the tests green"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	check("papi-1", "keep the tests green")
	os.Remove(info) // what the next run's CLI saw, not this one's
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	check("papi-2", "Fix the typo in README")
}

// An agent of a project with its own roles takes a matrix task in a role
// that only that project has: the role comes from the project, the task
// and its skills from the fleet's workspace.
func TestProjectRoleTakesAMatrixTask(t *testing.T) {
	ws := newRepo(t)
	web := newRepo(t)
	if err := os.WriteFile(filepath.Join(web.AgentDir(), "agents", "designer.md"), []byte("---\ndescription: Draws the pages\n---\nDESIGNER-MARK: you design pages.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "projects:\n  - name: web\n    path: " + web.Root + "\n"
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	info := filepath.Join(t.TempDir(), "fileinfo")
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_FILEINFO_ENV=GEMINI_SYSTEM_MD", "STUB_FILEINFO="+info)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Project: "web", Role: "designer", Spec: "draw"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	os.Remove(info)
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"}); err != nil {
		t.Fatalf("a designer agent of web could not take a matrix task: %v", err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	raw, err := os.ReadFile(info)
	if err != nil || !strings.Contains(string(raw), "DESIGNER-MARK") {
		t.Fatalf("the CLI's system prompt was not web's designer role: %q, %v", raw, err)
	}
	prompt, err := os.ReadFile(filepath.Join(f.p.runsDir("papi"), "papi-2.prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "Fix the typo in README") {
		t.Fatalf("prompt of the task run: %v\n%s", err, prompt)
	}
}

// StopEveryRun ends every run in flight and returns once each agent is
// idle, its run recorded stopped: what a test's cleanup (or a workspace's
// teardown) relies on before removing the folders the runs write into.
func TestStopEveryRunEndsAllRuns(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	f := testFleet(t, ws, "STUB_MODE=ok", "STUB_SLEEP_MS=30000")
	for _, name := range []string{"papi", "sony"} {
		if _, err := f.Create(ctx, fleet.CreateInput{Name: name, Spec: "a long spec"}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, f, name, fleet.StatusBusy)
	}
	if err := fleet.StopEveryRun(ctx, f); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"papi", "sony"} {
		a, err := f.Show(ctx, name)
		if err != nil || a.Status != fleet.StatusIdle {
			t.Fatalf("%s after StopEveryRun: %s, %v", name, a.Status, err)
		}
		if h, _ := f.History(ctx, name, 1, 10); h.TotalCount != 1 || h.Tasks[0].Status != fleet.RunStopped {
			t.Fatalf("%s's history: %+v", name, h)
		}
	}
}

// On a matrix without an Agents column (issue 19): --next takes the P1 task,
// not a task with no priority listed above it, and the claim is recorded in
// the task README; the run then moves the task on as usual.
func TestNextOnAMatrixWithoutAgentsOrPriorities(t *testing.T) {
	ws := newRepo(t)
	ctx := context.Background()
	src := "# Development Matrix\n\n| ID | Status | Pri | Diff | Mode | Description | Created | Updated |\n" +
		"|----|--------|-----|------|------|-------------|---------|---------|\n" +
		"| 260121185711 | TODO |  | easy | coder | No priority yet | 2026-11-01 | 2026-11-02 |\n" +
		"| 260121185712 | TODO | P2 | easy | coder | Second | 2026-11-01 | 2026-11-02 |\n" +
		"| 260121185713 | TODO | P1 | easy | coder | The urgent one | 2026-11-01 | 2026-11-02 |\n"
	if err := os.WriteFile(ws.MatrixPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ws.Root, "git", "commit", "-q", "-am", "a matrix without Agents")
	f := testFleet(t, ws, "STUB_MODE=ok")
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", Next: true}); err != nil {
		t.Fatal(err)
	}
	a, _ := f.Show(ctx, "papi")
	if a.CurrentRun == nil || a.CurrentRun.TaskID != "260121185713" {
		t.Fatalf("--next took %+v, want the P1 task 260121185713", a.CurrentRun)
	}
	waitStatus(t, f, "papi", fleet.StatusIdle)
	readmes, _ := filepath.Glob(filepath.Join(ws.Root, ".agent", "tasks", "260121185713_*", "README.md"))
	if len(readmes) != 1 {
		t.Fatalf("READMEs %v", readmes)
	}
	b, _ := os.ReadFile(readmes[0])
	if !strings.Contains(string(b), "claimed by @papi\n") || !strings.Contains(string(b), "status IN_PROGRESS → REVIEW") {
		t.Errorf("README:\n%s", b)
	}
}
