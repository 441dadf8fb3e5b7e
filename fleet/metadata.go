package fleet

import (
	"context"
	"sort"

	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// WithMetadata fills the workspace metadata of agents (show_agent's with
// metadata.AllFields, list_agents' with metadata.ListFields unless
// skipped): every agent's worktree collected in parallel, from the cache
// when fresh. It never fails; what cannot be collected is an error in the
// agent's metadata.
func (f *Fleet) WithMetadata(ctx context.Context, agents []Agent, scope metadata.Scope) {
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

// SetMetadata fills the agent's metadata from a collection (any backend).
func (a *Agent) SetMetadata(md metadata.Metadata) {
	a.Metadata, a.MetadataCount, a.MetadataError = md.FieldsOrEmpty(), md.Count(), md.Err
	a.metadataNames, a.metadataCollected = md.Names, true
}

// MetadataNames lists the agent's metadata fields in Taskfile order.
func (a Agent) MetadataNames() []string {
	if len(a.metadataNames) == len(a.Metadata) {
		return a.metadataNames
	}
	names := make([]string, 0, len(a.Metadata))
	for n := range a.Metadata {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
