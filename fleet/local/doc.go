// Package local is the fleet's local backend: named agents on this
// machine, each in its own git worktree — create, start, stop, delete and
// the history of their task runs.
//
// The state is files under .agent/fleet/ (one folder per agent; the runs'
// records in the workspace's store), written under a lock with atomic
// replaces (package fleet/statefile). Statuses are derived when read, from
// the agent's recorded state and whether the supervisor process of its
// current run is alive, so they never go stale: a run whose supervisor died
// without recording an end is recorded as failed ("interrupted") and the
// agent is idle.
//
// Runs are detached: Start launches a small supervisor process (the hidden
// `agentinfra agent run-supervisor` command, in its own session) that executes
// the run (package execute) and records the outcome, so a run outlives the
// CLI call or MCP request that started it. See docs/fleet.md.
package local
