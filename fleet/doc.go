// Package fleet is the model of a fleet of named agents that work in
// parallel, each in a workspace of its own, and what every backend shares:
// the Backend interface (create, start, stop, delete and the history of
// their task runs), the agents' and runs' shapes and statuses, the results
// both adapters (the CLI and the MCP server) return, one error code per
// kind, and the rules every backend applies the same way — the checks of
// names, sources and filters (rules.go), the history's paging, and the
// claim of a matrix task for an agent with its prompt (claim.go).
//
// The backends are packages of their own: fleet/local (this machine: git
// worktrees and detached runs), fleet/coder (a Coder deployment); package
// fleet/backends opens the one the configuration names. fleet/statefile is
// how they keep their state in files several processes share. See
// docs/fleet.md.
package fleet
