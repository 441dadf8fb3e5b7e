package fleettest

import (
	"context"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// designCases check the results of the nine tools of the fleet design,
// built as both adapters build them (the fleet's result builders), against
// the design's schema, and the shapes issue 20 asked for: workspace_id
// flat, current_task the summary with the run in current_run, last_task,
// start answering once the run runs, run IDs in the name's case.
var designCases = []Case{
	{"ResultsMatchTheDesignSchemas", func(t *testing.T, w World) {
		ctx := context.Background()
		b := w.Backend()
		ps, err := b.Projects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "list_agent_projects", fleet.ProjectsResult{Projects: ps})
		rs, err := b.Roles(ctx, ps[0].Name)
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "list_agent_roles", fleet.RolesResult{Roles: rs})

		a, err := b.Create(ctx, fleet.CreateInput{Name: "Shape", Spec: "keep the tests green"})
		if err != nil {
			t.Fatal(err)
		}
		created := fleet.NewCreateResult(a)
		ValidateResult(t, "create_agent", created)
		if a.WorkspaceID == "" || a.WorkspaceID != a.Workspace.ID {
			t.Errorf("workspace_id %q, workspace.id %q", a.WorkspaceID, a.Workspace.ID)
		}
		if a.CurrentRun == nil || a.CurrentTask == nil || *a.CurrentTask != a.CurrentRun.Summary {
			t.Fatalf("a created agent's current_task %v, current_run %+v: want the spec run's summary and the run", a.CurrentTask, a.CurrentRun)
		}
		if !strings.HasPrefix(a.CurrentRun.ID, "Shape-") {
			t.Errorf("run ID %q does not keep the name's case (Shape)", a.CurrentRun.ID)
		}

		busy := WaitStatus(t, w, "Shape", fleet.StatusBusy)
		shown := []fleet.Agent{busy}
		b.WithMetadata(ctx, shown, metadata.AllFields)
		ValidateResult(t, "show_agent", fleet.NewShowResult(shown[0]))
		if busy.CurrentTask == nil || *busy.CurrentTask != "keep the tests green" || busy.LastTask != nil {
			t.Errorf("busy on its spec: current_task %v, last_task %v", busy.CurrentTask, busy.LastTask)
		}
		list, err := b.List(ctx, fleet.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		b.WithMetadata(ctx, list, metadata.ListFields)
		lr := fleet.NewListResult(list)
		ValidateResult(t, "list_agents", lr)
		if row := lr.Agents[0]; row.CurrentTask == nil || *row.CurrentTask != "keep the tests green" || row.WorkspaceID != a.Workspace.ID {
			t.Errorf("list row: current_task %v, workspace_id %q", row.CurrentTask, row.WorkspaceID)
		}

		idle := WaitStatus(t, w, "Shape", fleet.StatusIdle)
		if idle.CurrentTask != nil || idle.CurrentRun != nil || idle.LastTask == nil || *idle.LastTask != "keep the tests green" {
			t.Errorf("idle after its spec: current_task %v, current_run %v, last_task %v", idle.CurrentTask, idle.CurrentRun, idle.LastTask)
		}
		shown = []fleet.Agent{idle}
		b.WithMetadata(ctx, shown, metadata.AllFields)
		ValidateResult(t, "show_agent", fleet.NewShowResult(shown[0]))

		started, err := fleet.StartAgent(ctx, b, fleet.StartInput{Name: "Shape", Text: "add a test for the parser"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "start_agent_task", started)
		// The design answers once the task has started: running, busy.
		if started.Task.Status != fleet.RunRunning || started.AgentStatus != fleet.StatusBusy || strings.Contains(started.Message, "still starting") {
			t.Errorf("start answered run %s, agent %s: %q", started.Task.Status, started.AgentStatus, started.Message)
		}
		stopped, err := fleet.StopAgent(ctx, b, "Shape")
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "stop_agent_task", stopped)
		WaitStatus(t, w, "Shape", fleet.StatusIdle)
		if again, _ := b.Show(ctx, "Shape"); again.LastTask == nil || *again.LastTask != "add a test for the parser" {
			t.Errorf("last_task after the stopped run = %v", again.LastTask)
		}
		h, err := b.History(ctx, "Shape", 1, 20)
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "show_agent_task_history", h)
		if h.TotalCount != 2 || h.Tasks[0].ID != started.Task.ID || h.Tasks[0].Status != fleet.RunStopped {
			t.Errorf("history %+v", h)
		}
		d, err := b.Delete(ctx, "Shape", true)
		if err != nil {
			t.Fatal(err)
		}
		ValidateResult(t, "delete_agent", fleet.NewDeleteResult(d))
	}},
	{"DuplicateNameAlreadyExists", func(t *testing.T, w World) {
		create(t, w, "dup")
		_, err := w.Backend().Create(context.Background(), fleet.CreateInput{Name: "DUP", Spec: "s"})
		WantCode(t, err, fleet.CodeConflict, "name")
		if !strings.Contains(err.Error(), "already exists") {
			t.Errorf("a taken name's error %q does not say \"already exists\"", err)
		}
	}},
}

func init() { Cases = append(Cases, designCases...) }
