package local

// A local agent's role is an agent mode of its project (package skills):
// its body is the agent's system prompt.

import (
	"context"
	"errors"

	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// loadRole returns a role's mode (its body is the system prompt).
func loadRole(ctx context.Context, ws *workspace.Workspace, name string) (skills.Mode, error) {
	return skills.LoadMode(ctx, ws, name)
}

// listRoles returns the loadable modes.
func listRoles(ctx context.Context, ws *workspace.Workspace) ([]skills.Mode, error) {
	modes, _, err := skills.ListModes(ctx, ws)
	return modes, err
}

// roleMissing reports whether loading a role failed because it has no file
// (not because its file cannot be read).
func roleMissing(err error) bool { return errors.Is(err, skills.ErrNotFound) }
