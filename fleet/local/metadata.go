package local

import (
	"context"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// WithMetadata fills the workspace metadata of agents (show_agent's with
// metadata.AllFields, list_agents' with metadata.ListFields unless
// skipped): every agent's worktree collected in parallel, from the cache
// when fresh. It never fails; what cannot be collected is an error in the
// agent's metadata.
func (f *Fleet) WithMetadata(ctx context.Context, agents []fleet.Agent, scope metadata.Scope) {
	dirs := make([]string, 0, len(agents))
	idx := make([]int, 0, len(agents))
	for i := range agents {
		agents[i].SetMetadata(metadata.Metadata{})
		if agents[i].Workspace.Path != "" { // a failed create may have none
			dirs = append(dirs, agents[i].Workspace.Path)
			idx = append(idx, i)
		}
	}
	for j, md := range f.opts.Metadata.CollectAll(ctx, dirs, scope) {
		agents[idx[j]].SetMetadata(md)
	}
}
