// Package backends opens a workspace's fleet on the backend its
// configuration (or the caller) names: "local", this machine, or "coder", a
// Coder deployment. It is the one place both adapters (the CLI and the MCP
// server) choose a backend.
package backends

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options say which backend to open and how.
type Options struct {
	// Name is the backend ("" = fleet.backend in .agent/config.yaml,
	// local by default).
	Name string
	// Fleet tunes the local backend.
	Fleet local.Options
	// Getenv reads the environment (nil = no environment): CODER_URL and
	// CODER_SESSION_TOKEN for the coder backend.
	Getenv func(string) string
	// Coder tunes the coder backend's client (tests: the fake's HTTP
	// client); its Config, Getenv and Now are filled here.
	Coder coder.BackendOptions
}

// Names lists the backends.
var Names = []string{fleet.BackendLocal, fleet.BackendCoder}

// Open returns the workspace's fleet on the chosen backend.
func Open(ws *workspace.Workspace, o Options) (fleet.Backend, error) {
	name := strings.ToLower(strings.TrimSpace(o.Name))
	if name == "" {
		cfg, err := fleet.ConfigOf(ws)
		if err != nil {
			return nil, err
		}
		name = strings.ToLower(cfg.Backend)
	}
	switch name {
	case fleet.BackendLocal:
		return local.New(ws, o.Fleet), nil
	case fleet.BackendCoder:
		cfg, err := coder.BackendConfigOf(ws)
		if err != nil {
			return nil, err
		}
		co := o.Coder
		co.Config, co.Getenv = cfg, o.Getenv
		if co.Now == nil {
			co.Now = o.Fleet.Now
		}
		b, err := coder.OpenBackend(ws, co)
		if err != nil {
			return nil, err
		}
		return b, nil
	default:
		return nil, &agenterr.Error{Kind: agenterr.Invalid, Field: "backend",
			Reason: fmt.Sprintf("unknown fleet backend %q: use %s", name, strings.Join(Names, " or "))}
	}
}
