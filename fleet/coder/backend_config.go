package coder

import (
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/workspace"
)

// DefaultPromptParameter is the template parameter that carries an agent's
// spec at create: the name Coder's Claude Code module gives its prompt.
const DefaultPromptParameter = "AI Prompt"

// BackendConfig is the coder section of .agent/config.yaml (config.Coder):
//
//	fleet:
//	  backend: coder
//	coder:
//	  url: https://coder.example.com     # CODER_URL wins
//	  token_file: ~/.config/coderv2/session  # CODER_SESSION_TOKEN wins; mode 0600
//	  prompt_parameter: AI Prompt         # the template parameter that takes the spec
//	  app_slug: ccw                       # the AgentAPI app's slug
//	  host_app_slug: agentinfra           # the agentinfra host app's slug (supervised agents)
//	  organization: coder                 # only this organization's templates (name or ID)
type BackendConfig = config.Coder

// BackendConfigOf is the workspace's coder section (ws.Config, decoded once
// per workspace) with the defaults filled in; token_file is absolute (a
// relative one is relative to the workspace root, ~/ is $HOME of the
// workspace's environment). A config that is not YAML, or a coder section
// that is wrong, is an Invalid error naming the file, line and key.
func BackendConfigOf(ws *workspace.Workspace) (BackendConfig, error) {
	cfg, err := ws.Config()
	if err != nil {
		return BackendConfig{}, err
	}
	c, err := cfg.Coder()
	if err != nil {
		return BackendConfig{}, err
	}
	if c.PromptParameter == "" {
		c.PromptParameter = DefaultPromptParameter
	}
	if c.AppSlug == "" {
		c.AppSlug = DefaultAgentAPISlug
	}
	if c.HostAppSlug == "" {
		c.HostAppSlug = DefaultHostAppSlug
	}
	return c, nil
}
