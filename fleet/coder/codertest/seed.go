package codertest

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// AddReadyWorkspace adds a workspace of template tmpl (its name) with
// preset (its name, "" for none) owned by owner ("me" is the token's
// user), already built and started, its agent connected and ready and
// its AgentAPI waiting: what a fleet finds on a deployment that has been
// running for a while.
func (s *Server) AddReadyWorkspace(owner, name, tmpl, preset string) (coder.Workspace, error) {
	if err := coder.ValidateWorkspaceName(name); err != nil {
		return coder.Workspace{}, fmt.Errorf("codertest: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	owner = s.user(owner)
	var t *template
	for _, c := range s.tmpls {
		if strings.EqualFold(c.t.Name, tmpl) {
			t = c
		}
	}
	if t == nil {
		return coder.Workspace{}, fmt.Errorf("codertest: no template %q", tmpl)
	}
	presetID := ""
	for _, p := range t.presets {
		if preset != "" && p.Name == preset {
			presetID = p.ID
		}
	}
	if preset != "" && presetID == "" {
		return coder.Workspace{}, fmt.Errorf("codertest: template %q has no preset %q", tmpl, preset)
	}
	if s.find(owner, name) != nil {
		return coder.Workspace{}, fmt.Errorf("codertest: %s already has a workspace %q", owner, name)
	}
	var params []coder.WorkspaceBuildParameter
	if owner == s.Owner {
		params = []coder.WorkspaceBuildParameter{{Name: PromptParam, Value: "Keep " + name + " green"}}
	}
	w := s.newWorkspace(owner, name, t, presetID, params)
	b := &w.ws.LatestBuild
	b.Job.Status = coder.JobSucceeded
	b.Job.StartedAt, b.Job.CompletedAt = ptr(s.now), ptr(s.now)
	w.agentUp = true
	s.settleBuild(w)
	return w.ws, nil
}

// ReportAppStatus reports a status of the owner's workspace name's AgentAPI
// app as its agent would (Claude Code's coder_report_task, or Coder's
// AgentAPI watcher, whose "working" carries no message): state is one of
// coder.AppStateWorking, AppStateIdle, AppStateComplete, AppStateFailure.
// It becomes the workspace's latest_app_status and the last of the app's
// statuses. The workspace must be running with its agent up.
func (s *Server) ReportAppStatus(name, state, message string) error {
	switch state {
	case coder.AppStateWorking, coder.AppStateIdle, coder.AppStateComplete, coder.AppStateFailure:
	default:
		return fmt.Errorf("codertest: app status state %q is none of working, idle, complete, failure", state)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.find(s.Owner, name)
	if w == nil {
		return fmt.Errorf("codertest: no workspace %q", name)
	}
	if w.ws.LatestBuild.Status != coder.BuildRunning || !w.agentUp {
		return fmt.Errorf("codertest: workspace %q is %s: only a running agent reports", name, w.ws.LatestBuild.Status)
	}
	s.appStatus(w, state, message)
	s.settleBuild(w)
	return nil
}
