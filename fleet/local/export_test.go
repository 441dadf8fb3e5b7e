package local

import (
	"context"
	"testing"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/workspace"
)

// NewTestFleet is testFleet for the external tests (the backend suite).
func NewTestFleet(t testing.TB, ws *workspace.Workspace, env ...string) *Fleet {
	return testFleet(t, ws, env...)
}

// AddFinishedRun records a finished run in agent tr.AgentName's history as
// the supervisor does.
func (f *Fleet) AddFinishedRun(t testing.TB, tr fleet.TaskRun) {
	t.Helper()
	rec := &agentrun.Record{RunID: tr.ID, Caller: agentrun.CallerFleet, Agent: "@" + tr.AgentName, Status: tr.Status, Summary: tr.Summary}
	if err := f.saveFinished(context.Background(), rec, tr); err != nil {
		t.Fatal(err)
	}
}
