package fleet

import (
	"testing"

	"github.com/agentinfra/agentinfra/workspace"
)

// NewTestFleet is testFleet for the external tests (the backend suite).
func NewTestFleet(t testing.TB, ws *workspace.Workspace, env ...string) *Fleet {
	return testFleet(t, ws, env...)
}

// HistoryPath is where the local fleet records agent name's finished runs.
func (f *Fleet) HistoryPath(name string) string { return f.p.file(name, historyFile) }
