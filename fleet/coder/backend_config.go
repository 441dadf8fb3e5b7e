package coder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/workspace"
)

// DefaultPromptParameter is the template parameter that carries an agent's
// spec at create: the name Coder's Claude Code module gives its prompt.
const DefaultPromptParameter = "AI Prompt"

// BackendConfig is the coder section of .agent/config.yaml:
//
//	fleet:
//	  backend: coder
//	coder:
//	  url: https://coder.example.com     # CODER_URL wins
//	  token_file: ~/.config/coderv2/session  # CODER_SESSION_TOKEN wins; mode 0600
//	  prompt_parameter: AI Prompt         # the template parameter that takes the spec
//	  app_slug: ccw                       # the AgentAPI app's slug
//	  organization: coder                 # only this organization's templates (name or ID)
type BackendConfig struct {
	URL             string `yaml:"url"`
	TokenFile       string `yaml:"token_file"`
	PromptParameter string `yaml:"prompt_parameter"`
	AppSlug         string `yaml:"app_slug"`
	Organization    string `yaml:"organization"`
}

// LoadBackendConfig reads the coder section of .agent/config.yaml, with the
// defaults filled in; a relative token_file is relative to the workspace
// root and ~/ is the home folder (from getenv HOME). A file that is not YAML
// is a 400 on field config.
func LoadBackendConfig(ws *workspace.Workspace, getenv func(string) string) (BackendConfig, error) {
	var file struct {
		Coder BackendConfig `yaml:"coder"`
	}
	path := filepath.Join(ws.AgentDir(), "config.yaml")
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return BackendConfig{}, err
	default:
		if err := yaml.Unmarshal(b, &file); err != nil {
			return BackendConfig{}, &fleet.Error{Code: fleet.CodeBadInput, Field: "config",
				Msg: path + ": " + err.Error() + "; the coder section looks like `coder: {url: https://coder.example.com, token_file: PATH}`"}
		}
	}
	c := file.Coder
	if c.PromptParameter == "" {
		c.PromptParameter = DefaultPromptParameter
	}
	if c.AppSlug == "" {
		c.AppSlug = DefaultAgentAPISlug
	}
	if t := c.TokenFile; t != "" {
		if rest, ok := strings.CutPrefix(t, "~/"); ok && getenv != nil && getenv("HOME") != "" {
			t = filepath.Join(getenv("HOME"), rest)
		} else if !filepath.IsAbs(t) {
			t = filepath.Join(ws.Root, t)
		}
		c.TokenFile = t
	}
	return c, nil
}
