package coder

// Supervised agents on Coder (issue 34; docs/coder.md): an agent created
// with approval mode ask runs under `agentinfra agent host` inside its
// workspace, a workspace app (slug coder.host_app_slug, default
// DefaultHostAppSlug) that runs the agent CLI through agentinfra's own
// bridges, policy and store and serves the workspace's supervision service
// and its agent's runs (package supervision/host). This machine reaches it
// through Coder's app proxy, with the person's Coder session token for
// Coder and the host's own token for the host, made at create and given to
// the template as a parameter (never in a URL).

// DefaultHostAppSlug is the slug of the workspace app that serves
// `agentinfra agent host`.
const DefaultHostAppSlug = "agentinfra"
