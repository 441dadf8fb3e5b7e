package coder

import (
	"fmt"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/supervision/host"
)

// observation is what the backend knows of a workspace at one moment: the
// workspace as Coder answered, and the AgentAPI's status when it was asked
// ("" when it was not: list derives everything from the one list call).
type observation struct {
	ws     Workspace
	slug   string
	apiSay string
	// supervised: the agent runs under agentinfra's host, which says how
	// it is (host; nil when it was not asked or did not answer).
	supervised bool
	host       *host.HostAgent
}

// agentReady reports whether the workspace's Coder agent (the one serving
// the AgentAPI app, else any) is connected and ready.
func (o observation) agentReady() bool {
	if _, ag, ok := FindApp(o.ws, o.slug); ok {
		return ag.Status == AgentConnected && ag.LifecycleState == LifecycleReady
	}
	for _, r := range o.ws.LatestBuild.Resources {
		for _, ag := range r.Agents {
			if ag.Status == AgentConnected && ag.LifecycleState == LifecycleReady {
				return true
			}
		}
	}
	return false
}

// working says whether the agent works on something. The AgentAPI's
// status, when asked, wins: it is the agent's terminal right now, while
// latest_app_status is what the agent last reported and may lag behind or
// never come (a template whose agent does not report).
func (o observation) working() bool {
	if o.apiSay != "" {
		return o.apiSay == AgentAPIRunning
	}
	return o.ws.LatestAppStatus != nil && o.ws.LatestAppStatus.State == AppStateWorking
}

// buildStatus maps a build that is not running straight through.
var buildStatus = map[string]fleet.Status{
	BuildPending: fleet.StatusPending, BuildStarting: fleet.StatusStarting, BuildStopping: fleet.StatusStopping,
	BuildStopped: fleet.StatusStopped, BuildFailed: fleet.StatusFailed, BuildCanceling: fleet.StatusCanceling,
	BuildCanceled: fleet.StatusCanceled, BuildDeleting: fleet.StatusDeleting, BuildDeleted: fleet.StatusDeleted,
}

// runEnd is how an open run ended, when the observation shows it did.
type runEnd struct {
	status, reason string
}

// derive returns the agent's status and, when the open run cur has ended
// by what the observation shows, how it ended (recorded by the caller).
//
//   - A build that is not running maps straight through; an open run ends
//     (failed) once the workspace stops, fails or goes.
//   - Running, the Coder agent not connected and ready: starting.
//   - Ready and working: busy.
//   - Ready and not working: idle, unless a run was given that has not shown
//     yet that it began and ended (then starting): the spec's run, until the
//     app reports a status after the run's baseline; a message's run, until
//     then or until the AgentAPI answers stable.
func derive(o observation, cur *runLine) (fleet.Status, *runEnd) {
	b := o.ws.LatestBuild
	if b.Status != BuildRunning {
		st, ok := buildStatus[b.Status]
		if !ok {
			st = fleet.StatusFailed
		}
		if cur != nil {
			switch b.Status {
			case BuildStopping, BuildStopped, BuildFailed, BuildCanceling, BuildCanceled, BuildDeleting, BuildDeleted:
				return st, &runEnd{fleet.RunFailed, fmt.Sprintf("interrupted: the workspace is %s", b.Status)}
			}
		}
		return st, nil
	}
	if !o.agentReady() {
		return fleet.StatusStarting, nil
	}
	if o.supervised {
		return deriveHosted(o, cur)
	}
	if o.working() {
		return fleet.StatusBusy, nil
	}
	if cur == nil {
		return fleet.StatusIdle, nil
	}
	last := o.ws.LatestAppStatus
	reported := last != nil && last.ID != cur.Baseline && last.State != AppStateWorking
	if reported {
		if last.State == AppStateFailure {
			return fleet.StatusIdle, &runEnd{fleet.RunFailed, "the agent reported a failure: " + last.Message}
		}
		reason := "completed"
		if last.Message != "" {
			reason += ": " + last.Message
		}
		return fleet.StatusIdle, &runEnd{fleet.RunCompleted, reason}
	}
	if cur.Sent && o.apiSay == AgentAPIStable {
		return fleet.StatusIdle, &runEnd{fleet.RunCompleted, "completed: the agent waits for input again"}
	}
	return fleet.StatusStarting, nil
}

// view renders a workspace as an agent. rec is agentinfra's record of it
// (nil for a workspace made elsewhere), role the name of its build's preset.
func (b *Backend) view(o observation, rec *agentRecord, role string, st fleet.Status, cur *runLine) fleet.Agent {
	ws := o.ws
	project := ws.TemplateDisplayName
	if project == "" {
		project = ws.TemplateName
	}
	a := fleet.Agent{Name: ws.Name, Status: st, Role: role, Project: project, CreatedAt: ws.CreatedAt, UpdatedAt: ws.UpdatedAt,
		Workspace: fleet.Workspace{ID: ws.ID, Path: b.client.URL() + "/@" + ws.OwnerName + "/" + ws.Name},
		Metadata:  fleet.MetadataFields{}}
	if rec != nil {
		a.Spec, a.CLI = rec.Spec, rec.CLI
	}
	if st == fleet.StatusFailed {
		a.Error = ws.LatestBuild.Job.Error
		if a.Error == "" {
			a.Error = "the workspace's last build failed; see its build log in Coder"
		}
	}
	switch {
	case cur != nil:
		tr := cur.TaskRun
		if st == fleet.StatusBusy && tr.Status == fleet.RunPending {
			tr.Status = fleet.RunRunning
		}
		a.CurrentRun = &tr
	case st == fleet.StatusBusy && ws.LatestAppStatus != nil:
		// Work agentinfra did not give (typed in Coder, say): shown as the
		// app reports it, as the run the history will show (the ID and
		// summary of its stretch of work).
		first, summary := *ws.LatestAppStatus, ws.LatestAppStatus.Message
		if statuses := appStatuses(ws, o.slug); first.State == AppStateWorking {
			for i, s := range statuses {
				if s.ID == first.ID {
					begin := stretchStart(statuses, i)
					first, summary = statuses[begin], stretchSummary(statuses, begin, i)
					break
				}
			}
		}
		started := first.CreatedAt
		a.CurrentRun = &fleet.TaskRun{ID: appRunID(first), AgentName: ws.Name, Summary: summary, Status: fleet.RunRunning,
			Source: fleet.SourceHuman, CreatedAt: first.CreatedAt, StartedAt: &started}
	}
	a.Finish(a.CurrentRun, b.lastEnded(o, rec))
	return a
}

// lastEnded returns the latest run of the agent that ended, as its history
// shows it (agentinfra's runs merged with the work the app reported), or
// nil when none has.
func (b *Backend) lastEnded(o observation, rec *agentRecord) *fleet.TaskRun {
	var runs []runLine
	if rec != nil {
		runs, _ = b.files.runs(o.ws.Name) // unreadable: the app's runs still tell
	}
	all := mergeRuns(o.ws.Name, runs, appStatuses(o.ws, o.slug))
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].CompletedAt != nil {
			return &all[i]
		}
	}
	return nil
}

func appRunID(s WorkspaceAppStatus) string {
	id := s.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return "app-" + id
}
