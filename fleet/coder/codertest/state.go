package codertest

import (
	"strings"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// newWorkspace records a workspace with a first, pending start build.
// The caller holds s.mu.
func (s *Server) newWorkspace(owner, name string, t *template, presetID string, params []coder.WorkspaceBuildParameter) *workspace {
	w := &workspace{ownerName: owner, params: params, agentID: newID(), appID: newID(), resourceID: newID(), aiTaskID: newID(),
		agentapi: agentAPI{status: coder.AgentAPIStable}}
	ownerID := s.userID
	if owner != s.Owner {
		ownerID = newID()
	}
	w.ws = coder.Workspace{ID: newID(), CreatedAt: s.now, UpdatedAt: s.now, OwnerID: ownerID, OwnerName: owner,
		OrganizationID: s.org.ID, OrganizationName: s.org.Name, TemplateID: t.t.ID, TemplateName: t.t.Name,
		TemplateDisplayName: t.t.DisplayName, TemplateActiveVersionID: t.t.ActiveVersionID, Name: name,
		LastUsedAt: s.now, Health: coder.WorkspaceHealth{Healthy: true, FailingAgents: []string{}}}
	var preset *string
	if presetID != "" {
		preset = &presetID
	}
	s.newBuild(w, coder.TransitionStart, preset)
	s.wss = append(s.wss, w)
	return w
}

// newBuild starts a build of w with a pending job. The caller holds s.mu.
func (s *Server) newBuild(w *workspace, transition string, preset *string) {
	prev := w.ws.LatestBuild
	if preset == nil {
		preset = prev.TemplateVersionPresetID
	}
	w.ws.LatestBuild = coder.WorkspaceBuild{ID: newID(), CreatedAt: s.now, UpdatedAt: s.now, WorkspaceID: w.ws.ID,
		WorkspaceName: w.ws.Name, WorkspaceOwnerID: w.ws.OwnerID, WorkspaceOwnerName: w.ownerName,
		TemplateVersionID: w.ws.TemplateActiveVersionID, BuildNumber: prev.BuildNumber + 1, Transition: transition,
		InitiatorName: s.Owner, Reason: "initiator", Resources: []coder.WorkspaceResource{},
		Job:                     coder.ProvisionerJob{ID: newID(), CreatedAt: s.now, Status: coder.JobPending},
		TemplateVersionPresetID: preset}
	w.agentUp = false
	// The AgentAPI process goes away with the build: its streams end.
	for ch := range w.agentapi.subs {
		close(ch)
	}
	w.agentapi = agentAPI{status: coder.AgentAPIStable, messages: w.agentapi.messages}
	s.settleBuild(w)
}

// settleBuild derives the build's status and resources from its job and
// transition, as Coder does. The caller holds s.mu.
func (s *Server) settleBuild(w *workspace) {
	b := &w.ws.LatestBuild
	b.UpdatedAt = s.now
	w.ws.UpdatedAt = s.now
	switch b.Job.Status {
	case coder.JobPending:
		b.Status = coder.BuildPending
	case coder.JobRunning:
		b.Status = map[string]string{coder.TransitionStart: coder.BuildStarting,
			coder.TransitionStop: coder.BuildStopping, coder.TransitionDelete: coder.BuildDeleting}[b.Transition]
	case coder.JobSucceeded:
		b.Status = map[string]string{coder.TransitionStart: coder.BuildRunning,
			coder.TransitionStop: coder.BuildStopped, coder.TransitionDelete: coder.BuildDeleted}[b.Transition]
	case coder.JobFailed:
		b.Status = coder.BuildFailed
	}
	b.Resources = []coder.WorkspaceResource{}
	if b.Transition != coder.TransitionStart || b.Job.Status != coder.JobSucceeded {
		return
	}
	if b.Job.CompletedAt == nil {
		b.Job.CompletedAt = ptr(s.now)
	}
	agent := coder.WorkspaceAgent{ID: w.agentID, CreatedAt: *b.Job.CompletedAt, UpdatedAt: s.now,
		Status: coder.AgentConnecting, LifecycleState: coder.LifecycleCreated, Name: AgentName, Version: "v2.27.1"}
	if w.agentUp {
		agent.Status, agent.LifecycleState = coder.AgentConnected, coder.LifecycleReady
		agent.FirstConnectedAt, agent.ReadyAt = b.Job.CompletedAt, b.Job.CompletedAt
	}
	statuses := append([]coder.WorkspaceAppStatus{}, w.statuses...)
	agent.Apps = []coder.WorkspaceApp{{ID: w.appID, URL: "http://localhost:3284/", Slug: s.appSlug,
		DisplayName: "Claude Code", Subdomain: s.appHost != "", SharingLevel: "owner", Health: "healthy",
		Statuses: statuses}}
	agent.Apps = append(agent.Apps, s.servedApps(w)...)
	resID := w.resourceID
	agent.ResourceID = resID
	b.Resources = []coder.WorkspaceResource{
		{ID: resID, CreatedAt: agent.CreatedAt, JobID: b.Job.ID, WorkspaceTransition: b.Transition,
			Type: "docker_container", Name: "workspace", Agents: []coder.WorkspaceAgent{agent}},
		{ID: w.aiTaskID, CreatedAt: agent.CreatedAt, JobID: b.Job.ID, WorkspaceTransition: b.Transition,
			Type: "coder_ai_task", Name: "agentapi"},
	}
}

// appStatus records a status the AgentAPI app reports (as Claude Code's
// Coder MCP does). The caller holds s.mu.
func (s *Server) appStatus(w *workspace, state, msg string) {
	st := coder.WorkspaceAppStatus{ID: newID(), CreatedAt: s.now, WorkspaceID: w.ws.ID, AgentID: w.agentID,
		AppID: w.appID, State: state, Message: msg}
	w.statuses = append(w.statuses, st)
	w.ws.LatestAppStatus = &st
}

// find returns the live workspace owned by owner called name (Coder
// compares names case-insensitively). The caller holds s.mu.
func (s *Server) find(owner, name string) *workspace {
	for _, w := range s.wss {
		if strings.EqualFold(w.ownerName, owner) && strings.EqualFold(w.ws.Name, name) {
			return w
		}
	}
	return nil
}

func (s *Server) findID(id string) *workspace {
	for _, w := range s.wss {
		if w.ws.ID == id {
			return w
		}
	}
	return nil
}

func (s *Server) template(id string) *template {
	for _, t := range s.tmpls {
		if t.t.ID == id {
			return t
		}
	}
	return nil
}

func (s *Server) version(id string) *template {
	for _, t := range s.tmpls {
		if t.t.ActiveVersionID == id {
			return t
		}
	}
	return nil
}
