// Package backends opens a workspace's fleet on the backend its
// configuration (or the caller) names: "local", this machine, or "coder", a
// Coder deployment. It is the one place both adapters (the CLI and the MCP
// server) choose a backend.
package backends

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/workspace"
)

// Options say which backend to open and how.
type Options struct {
	// Name is the backend ("" = fleet.backend in .agent/config.yaml,
	// local by default).
	Name string
	// Fleet tunes the local backend.
	Fleet fleet.Options
	// Getenv reads the environment (nil = no environment).
	Getenv func(string) string
}

// Names lists the backends.
var Names = []string{fleet.BackendLocal, fleet.BackendCoder}

// Open returns the workspace's fleet on the chosen backend.
func Open(ws *workspace.Workspace, o Options) (fleet.Backend, error) {
	name := strings.ToLower(strings.TrimSpace(o.Name))
	if name == "" {
		cfg, err := fleet.LoadConfig(ws)
		if err != nil {
			return nil, err
		}
		name = strings.ToLower(cfg.Backend)
	}
	switch name {
	case fleet.BackendLocal:
		return fleet.New(ws, o.Fleet), nil
	default:
		return nil, &fleet.Error{Code: fleet.CodeBadInput, Field: "backend",
			Msg: fmt.Sprintf("unknown fleet backend %q: use %s", name, strings.Join(Names, " or "))}
	}
}
