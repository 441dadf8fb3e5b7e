package codertest

import (
	"github.com/agentinfra/agentinfra/fleet/coder"
)

// AddHostTemplate adds a template of supervised agents (docs/coder.md):
// AddTemplate's, with the parameters of agentinfra's host (its token, the
// sessions' owner, the CLI). A test serves each workspace's host app with
// SetApp, typically from OnAgentUp.
func (s *Server) AddHostTemplate(name, displayName string, presets ...string) coder.Template {
	t := s.AddTemplate(name, displayName, presets...)
	s.mu.Lock()
	defer s.mu.Unlock()
	tt := s.template(t.ID)
	tt.params = append(tt.params,
		coder.TemplateVersionParameter{Name: coder.HostTokenParameter, DisplayName: "agentinfra host token", Type: "string", FormType: "input", Mutable: true},
		coder.TemplateVersionParameter{Name: coder.HostOwnerParameter, DisplayName: "agentinfra owner", Type: "string", FormType: "input", Mutable: true},
		coder.TemplateVersionParameter{Name: coder.HostCLIParameter, DisplayName: "agent CLI", Type: "string", FormType: "input", DefaultValue: "claude", Mutable: true})
	return tt.t
}

// OnAgentUp calls fn, in a goroutine of its own, each time a workspace's
// agent comes up (its start build done, one step later), with the
// workspace's name and its parameters as it was created: what a template's
// startup script does (start `agentinfra agent host` with them).
func (s *Server) OnAgentUp(fn func(name string, params map[string]string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onAgentUp = fn
}
