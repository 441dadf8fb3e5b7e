package fleettest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
)

// Case is one behaviour every backend has.
type Case struct {
	Name string
	Run  func(t *testing.T, w World)
}

// Run runs every case on a fresh world from newWorld.
func Run(t *testing.T, newWorld func(t *testing.T) World) {
	for _, c := range Cases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, newWorld(t)) })
	}
}

// create makes agent name and waits until it is idle, its spec's run done.
func create(t *testing.T, w World, name string) fleet.Agent {
	t.Helper()
	if _, err := w.Backend().Create(context.Background(), fleet.CreateInput{Name: name, Spec: "keep the tests green"}); err != nil {
		t.Fatal(err)
	}
	return WaitStatus(t, w, name, fleet.StatusIdle)
}

func history(t *testing.T, w World, name string, page, size int) fleet.HistoryPage {
	t.Helper()
	h, err := w.Backend().History(context.Background(), name, page, size)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Cases is the suite.
var Cases = []Case{
	{"CreateGoesBusyThenIdleWithTheSpecRunCompleted", func(t *testing.T, w World) {
		ctx := context.Background()
		a, err := w.Backend().Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the tests green"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Name != "papi" || a.Spec != "keep the tests green" || a.Project == "" || a.Role == "" || a.Workspace.ID == "" {
			t.Fatalf("created agent %+v", a)
		}
		if a.Status != fleet.StatusPending && a.Status != fleet.StatusStarting && a.Status != fleet.StatusBusy {
			t.Fatalf("right after create the agent is %s, want pending, starting or busy", a.Status)
		}
		if a.CurrentRun == nil || a.CurrentRun.Summary != "keep the tests green" {
			t.Fatalf("current task = %+v", a.CurrentRun)
		}
		busy := WaitStatus(t, w, "papi", fleet.StatusBusy)
		if busy.CurrentRun == nil || busy.CurrentRun.Status != fleet.RunRunning || busy.CurrentRun.ID != a.CurrentRun.ID {
			t.Fatalf("busy agent's current task = %+v", busy.CurrentRun)
		}
		idle := WaitStatus(t, w, "papi", fleet.StatusIdle)
		if idle.CurrentRun != nil {
			t.Fatalf("idle agent has a current task %+v", idle.CurrentRun)
		}
		h := history(t, w, "papi", 1, fleet.DefaultPageSize)
		if h.TotalCount != 1 || h.Tasks[0].ID != a.CurrentRun.ID || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[0].CompletedAt == nil {
			t.Fatalf("history = %+v", h)
		}
		list, err := w.Backend().List(ctx, fleet.ListFilter{})
		if err != nil || len(list) != 1 || list[0].Name != "papi" || list[0].Status != fleet.StatusIdle {
			t.Fatalf("list = %+v, %v", list, err)
		}
	}},
	{"StartWhileBusyIsRefused", func(t *testing.T, w World) {
		ctx := context.Background()
		create(t, w, "sony")
		res, err := w.Backend().Start(ctx, fleet.StartInput{Name: "sony", Text: "add a test for the parser"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task.Summary != "add a test for the parser" || res.Task.AgentName != "sony" {
			t.Fatalf("start result %+v", res)
		}
		WaitStatus(t, w, "sony", fleet.StatusBusy)
		_, err = w.Backend().Start(ctx, fleet.StartInput{Name: "sony", Text: "one more"})
		WantCode(t, err, fleet.CodeConflict, "")
		WaitStatus(t, w, "sony", fleet.StatusIdle)
		h := history(t, w, "sony", 1, 100)
		if h.TotalCount != 2 || h.Tasks[0].ID != res.Task.ID || h.Tasks[0].Status != fleet.RunCompleted {
			t.Fatalf("history = %+v, want the spec's run and the started one, newest first", h)
		}
	}},
	{"ConcurrentStartsHaveOneWinner", func(t *testing.T, w World) {
		create(t, w, "sony")
		const n = 10
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = w.Backend().Start(context.Background(), fleet.StartInput{Name: "sony", Text: "task"})
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			WantCode(t, err, fleet.CodeConflict, "")
		}
		if wins != 1 {
			t.Fatalf("%d of %d concurrent starts won, want exactly 1", wins, n)
		}
	}},
	{"StopEndsTheRunAndTheAgentIsIdle", func(t *testing.T, w World) {
		ctx := context.Background()
		create(t, w, "stopme")
		_, err := w.Backend().Stop(ctx, "stopme")
		WantCode(t, err, fleet.CodeConflict, "") // nothing to stop
		res, err := w.Backend().Start(ctx, fleet.StartInput{Name: "stopme", Text: "a long task"})
		if err != nil {
			t.Fatal(err)
		}
		WaitStatus(t, w, "stopme", fleet.StatusBusy)
		out, err := fleet.StopAgent(ctx, w.Backend(), "stopme")
		if err != nil {
			t.Fatal(err)
		}
		if out.Task.ID != res.Task.ID || out.Task.Status != fleet.RunStopped {
			t.Fatalf("stop result %+v", out)
		}
		WaitStatus(t, w, "stopme", fleet.StatusIdle)
		h := history(t, w, "stopme", 1, 20)
		if h.Tasks[0].ID != res.Task.ID || h.Tasks[0].Status != fleet.RunStopped {
			t.Fatalf("history = %+v", h)
		}
	}},
	{"MatrixTaskIsClaimedAndGoesToReview", func(t *testing.T, w World) {
		ctx := context.Background()
		create(t, w, "worker")
		res, err := w.Backend().Start(ctx, fleet.StartInput{Name: "worker", TaskID: "c3c3c3"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task.TaskID != "c3c3c3" || !strings.HasPrefix(res.Task.Summary, "c3c3c3: Fix the typo") {
			t.Fatalf("start result %+v", res)
		}
		if tk := TaskOf(t, w, "c3c3c3"); tk.Status != "IN_PROGRESS" || !strings.Contains(strings.Join(tk.Agents, " "), "@worker") {
			t.Fatalf("claimed task is %s held by %v", tk.Status, tk.Agents)
		}
		create(t, w, "other")
		_, err = w.Backend().Start(ctx, fleet.StartInput{Name: "other", TaskID: "c3c3c3"})
		WantCode(t, err, fleet.CodeConflict, "task_id")
		_, err = w.Backend().Start(ctx, fleet.StartInput{Name: "other", TaskID: "ffffff"})
		WantCode(t, err, fleet.CodeNotFound, "task_id")
		WaitStatus(t, w, "worker", fleet.StatusIdle)
		if tk := TaskOf(t, w, "c3c3c3"); tk.Status != "REVIEW" {
			t.Fatalf("after the run the task is %s, want REVIEW", tk.Status)
		}
	}},
	{"DeleteRemovesTheAgent", func(t *testing.T, w World) {
		ctx := context.Background()
		a := create(t, w, "gone")
		create(t, w, "kept")
		d, err := w.Backend().Delete(ctx, "gone", false)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != "gone" || d.WorkspaceID != a.Workspace.ID {
			t.Fatalf("delete result %+v", d)
		}
		for i := 0; ; i++ {
			_, err := w.Backend().Show(ctx, "gone")
			if err != nil {
				WantCode(t, err, fleet.CodeNotFound, "agent_name")
				break
			}
			if i > 50 {
				t.Fatal("the deleted agent never went away")
			}
			w.Step(t)
		}
		list, err := w.Backend().List(ctx, fleet.ListFilter{})
		if err != nil || len(list) != 1 || list[0].Name != "kept" {
			t.Fatalf("list after delete = %+v, %v", list, err)
		}
		_, err = w.Backend().Delete(ctx, "gone", false)
		WantCode(t, err, fleet.CodeNotFound, "agent_name")
	}},
	{"RolesAndProjects", func(t *testing.T, w World) {
		ctx := context.Background()
		projects, err := w.Backend().Projects(ctx)
		if err != nil || len(projects) == 0 {
			t.Fatalf("projects = %+v, %v", projects, err)
		}
		for _, p := range projects {
			if p.Name == "" || p.DisplayName == "" {
				t.Errorf("project without a name: %+v", p)
			}
		}
		roles, err := w.Backend().Roles(ctx, projects[0].Name)
		if err != nil || len(roles) < 2 {
			t.Fatalf("roles of %s = %+v, %v", projects[0].Name, roles, err)
		}
		for _, r := range roles {
			if r.Name == "" || r.DisplayName == "" {
				t.Errorf("role without a name: %+v", r)
			}
		}
		_, err = w.Backend().Roles(ctx, "nowhere")
		WantCode(t, err, fleet.CodeNotFound, "project")
		role := roles[len(roles)-1].Name
		a, err := w.Backend().Create(ctx, fleet.CreateInput{Name: "rolled", Spec: "s", Role: role, Project: projects[0].Name})
		if err != nil {
			t.Fatal(err)
		}
		if a.Role != role || a.Project != projects[0].Name {
			t.Fatalf("agent has role %q project %q, want %q %q", a.Role, a.Project, role, projects[0].Name)
		}
		if shown := WaitStatus(t, w, "rolled", fleet.StatusIdle); shown.Role != role || shown.Project != projects[0].Name {
			t.Fatalf("shown with role %q project %q", shown.Role, shown.Project)
		}
		list, err := w.Backend().List(ctx, fleet.ListFilter{Project: projects[0].Name})
		if err != nil || len(list) != 1 || list[0].Role != role {
			t.Fatalf("list of project %s = %+v, %v", projects[0].Name, list, err)
		}
	}},
	{"HistoryPagination", func(t *testing.T, w World) {
		ctx := context.Background()
		create(t, w, "hist")
		ids := w.AddRuns(t, "hist", 44)
		for _, c := range []struct {
			page, size int
			field      string
			want       string
		}{{0, 20, "page", "from 1"}, {1, 0, "page_size", "1 to 100"}, {1, 101, "page_size", "1 to 100"}, {4, 20, "page", "3 page(s)"}} {
			_, err := w.Backend().History(ctx, "hist", c.page, c.size)
			WantCode(t, err, fleet.CodeBadInput, c.field)
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("page %d size %d: error %q does not say %q", c.page, c.size, err, c.want)
			}
		}
		first := history(t, w, "hist", 1, 20)
		last := history(t, w, "hist", 3, 20)
		if first.TotalCount != 45 || first.TotalPages != 3 || first.Page != 1 || first.PageSize != 20 || len(first.Tasks) != 20 || len(last.Tasks) != 5 {
			t.Fatalf("pages: first %d/%d/%d, last %d", first.TotalCount, first.TotalPages, len(first.Tasks), len(last.Tasks))
		}
		if first.Tasks[0].ID != ids[len(ids)-1] || last.Tasks[4].ID != "hist-1" {
			t.Fatalf("not newest first: first %s, last %s", first.Tasks[0].ID, last.Tasks[4].ID)
		}
		_, err := w.Backend().History(ctx, "nobody", 1, 20)
		WantCode(t, err, fleet.CodeNotFound, "agent_name")
	}},
	{"ErrorCodes", func(t *testing.T, w World) {
		ctx := context.Background()
		b := w.Backend()
		create(t, w, "Papi")
		for _, c := range []struct {
			in    fleet.CreateInput
			code  int
			field string
		}{
			{fleet.CreateInput{Name: "", Spec: "s"}, 400, "name"},
			{fleet.CreateInput{Name: "-papi", Spec: "s"}, 400, "name"},
			{fleet.CreateInput{Name: "pa--pi", Spec: "s"}, 400, "name"},
			{fleet.CreateInput{Name: "papi_2", Spec: "s"}, 400, "name"},
			// Too long on every backend (local names have 20 characters,
			// Coder's 32: each backend's own tests check its limit).
			{fleet.CreateInput{Name: strings.Repeat("a", 33), Spec: "s"}, 400, "name"},
			{fleet.CreateInput{Name: "sony", Spec: "  "}, 400, "spec"},
			{fleet.CreateInput{Name: "sony", Spec: "s", Role: "pilot"}, 400, "role"},
			{fleet.CreateInput{Name: "sony", Spec: "s", Project: "nowhere"}, 404, "project"},
			{fleet.CreateInput{Name: "sony", Spec: "s", CLI: "vim"}, 400, "cli"},
			{fleet.CreateInput{Name: "PAPI", Spec: "s"}, 409, "name"},
		} {
			_, err := b.Create(ctx, c.in)
			WantCode(t, err, c.code, c.field)
		}
		_, err := b.Show(ctx, "nobody")
		WantCode(t, err, fleet.CodeNotFound, "agent_name")
		_, err = b.Show(ctx, "../etc")
		WantCode(t, err, fleet.CodeBadInput, "agent_name")
		_, err = b.List(ctx, fleet.ListFilter{Status: "sleeping"})
		WantCode(t, err, fleet.CodeBadInput, "status_filter")
		_, err = b.List(ctx, fleet.ListFilter{Project: "nowhere"})
		WantCode(t, err, fleet.CodeNotFound, "project_filter")
		_, err = b.Start(ctx, fleet.StartInput{Name: "papi"})
		WantCode(t, err, fleet.CodeBadInput, "task_description")
		_, err = b.Start(ctx, fleet.StartInput{Name: "nobody", Text: "x"})
		WantCode(t, err, fleet.CodeNotFound, "agent_name")
		_, err = b.Stop(ctx, "nobody")
		WantCode(t, err, fleet.CodeNotFound, "agent_name")
		WantCode(t, w.Unavailable(t), fleet.CodeUnavailable, "")
		if list, err := b.List(ctx, fleet.ListFilter{}); err != nil || len(list) != 1 {
			t.Fatalf("after the refusals the fleet is %+v, %v", list, err)
		}
	}},
}
