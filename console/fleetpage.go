package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/task"
)

// agentRow is one agent as the fleet page shows it.
type agentRow struct {
	fleet.Agent
	// List are the include_in_list metadata fields, in the Taskfile's order.
	List []metaField
	// Waiting is what the agent's run waits a person for (nil: nothing).
	Waiting *waitBadge
	// Failed is how the agent's last run failed (nil: it did not, or the
	// agent works on another): its CLI's own words apart, as the session
	// page shows them.
	Failed *failedRun
}

type failedRun struct {
	Run  fleet.TaskRun
	CLI  string
	Head string
	Said []string
}

// failedOf is the last run of a when it failed while nothing else runs.
func failedOf(a fleet.Agent) *failedRun {
	if a.CurrentRun != nil || a.LastRun == nil || a.LastRun.Status != fleet.RunFailed {
		return nil
	}
	f := &failedRun{Run: *a.LastRun, CLI: a.CLI}
	f.Head, f.Said = runner.SaidOf(a.CLI, a.LastRun.ExitReason)
	return f
}

type metaField struct{ Name, Value string }

type fleetData struct {
	Agents   []agentRow
	Error    string
	Roles    []fleet.Role
	Projects []fleet.Project
	CLIs     []string
	// Tasks are the matrix tasks an agent can be given (not done).
	Tasks []matrix.Task
	Has   bool
}

func (s *Server) fleetData(ctx context.Context, forms bool) fleetData {
	d := fleetData{Has: s.o.Fleet != nil, CLIs: runner.CLIs}
	if s.o.Fleet == nil {
		d.Error = "this workspace has no fleet (see docs/fleet.md)"
		return d
	}
	agents, err := s.o.Fleet.List(ctx, fleet.ListFilter{})
	if err != nil {
		d.Error = err.Error()
		return d
	}
	s.o.Fleet.WithMetadata(ctx, agents, metadata.ListFields)
	waits := s.waits(ctx)
	for _, a := range agents {
		row := agentRow{Agent: a}
		row.Waiting = waits.agent(&row.Agent)
		row.Failed = failedOf(a)
		vals := a.Summary().Metadata
		for _, n := range a.MetadataNames() {
			if v, ok := vals[n]; ok {
				mf := metaField{Name: n, Value: "—"}
				if v != nil {
					mf.Value = *v
				}
				row.List = append(row.List, mf)
			}
		}
		d.Agents = append(d.Agents, row)
	}
	if forms {
		d.Roles, _ = s.o.Fleet.Roles(ctx, "")
		d.Projects, _ = s.o.Fleet.Projects(ctx)
		d.Tasks = s.openTasks(ctx)
	}
	return d
}

// openTasks are the tasks not done, for the start form.
func (s *Server) openTasks(ctx context.Context) []matrix.Task {
	ts, err := task.ListTasks(ctx, s.o.Workspace, matrix.Query{})
	if err != nil {
		return nil
	}
	v, err := task.LoadVocabulary(s.o.Workspace)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(ts, func(t matrix.Task) bool { return task.IsStatus(v, t, task.StatusDone) })
}

func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "fleet", "Fleet", s.fleetData(r.Context(), true))
}

func (s *Server) fleetList(w http.ResponseWriter, r *http.Request) {
	s.render(w, "fleet", "fleet-list", s.fleetData(r.Context(), true))
}

func (s *Server) noFleet(w http.ResponseWriter, r *http.Request) bool {
	if s.o.Fleet == nil {
		s.fail(w, r, "/fleet", badInput("this workspace has no fleet"))
		return true
	}
	return false
}

func (s *Server) fleetCreate(w http.ResponseWriter, r *http.Request) {
	if s.noFleet(w, r) {
		return
	}
	in := fleet.CreateInput{Name: strings.TrimSpace(r.FormValue("name")), Project: r.FormValue("project"), Role: r.FormValue("role"),
		Spec: strings.TrimSpace(r.FormValue("spec")), CLI: r.FormValue("cli"), Source: fleet.SourceHuman}
	a, err := s.o.Fleet.Create(task.WithActor(r.Context(), task.Actor(s.o.User)), in)
	if err != nil {
		s.fail(w, r, "/fleet", err)
		return
	}
	s.done(w, r, "/fleet", fmt.Sprintf("Agent %s created (%s).", a.Name, a.Status))
}

func (s *Server) fleetStart(w http.ResponseWriter, r *http.Request) {
	if s.noFleet(w, r) {
		return
	}
	in := fleet.StartInput{Name: r.PathValue("name"), Source: fleet.SourceHuman}
	if r.FormValue("kind") == "task" {
		in.TaskID = strings.TrimSpace(r.FormValue("task"))
	} else {
		in.Text = strings.TrimSpace(r.FormValue("text"))
	}
	res, err := s.o.Fleet.Start(task.WithActor(r.Context(), task.Actor(s.o.User)), in)
	if err != nil {
		s.fail(w, r, "/fleet", err)
		return
	}
	s.done(w, r, "/fleet", fmt.Sprintf("Agent %s started run %s.", in.Name, res.Task.ID))
}

func (s *Server) fleetStop(w http.ResponseWriter, r *http.Request) {
	if s.noFleet(w, r) {
		return
	}
	res, err := fleet.StopAgent(task.WithActor(r.Context(), task.Actor(s.o.User)), s.o.Fleet, r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "/fleet", err)
		return
	}
	s.done(w, r, "/fleet", fmt.Sprintf("Agent %s stopped (%s).", r.PathValue("name"), res.AgentStatus))
}
