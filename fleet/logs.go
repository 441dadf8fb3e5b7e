package fleet

import (
	"context"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
)

// LogsResult is one run's log: show_agent_logs' result and `agent logs
// --json`.
type LogsResult struct {
	Run TaskRun `json:"run"`
	// Items are the log's last items (all of them unless a tail was asked),
	// oldest first.
	Items []events.RunItem `json:"items"`
	// TotalCount counts the items in the log.
	TotalCount int `json:"total_count"`
	// Live says the run is still going (its log grows).
	Live bool `json:"live"`
	// Warnings say what the call found and dealt with (a leftover of a
	// killed command it rolled back or finished).
	Warnings []string `json:"warnings,omitempty"`
}

// LogReader is a backend that keeps its runs' logs (the local one; a
// Coder agent's conversation lives in its workspace).
type LogReader interface {
	// Logs returns the log of agent name's run runID ("" = the current
	// run, else the last one), its last tail items (0 = all).
	Logs(ctx context.Context, name, runID string, tail int) (LogsResult, error)
	// FollowLogs calls fn with every item of the run's log, then with each
	// new one, until the run ends or ctx does.
	FollowLogs(ctx context.Context, name, runID string, fn func(events.RunItem) error) (TaskRun, error)
}

// NoLogs is the error of a backend without logs.
func NoLogs(backend string) error {
	return agenterr.Unavailablef(nil, "the %s backend keeps no run logs: a %s agent's conversation is in its workspace", backend, backend)
}
