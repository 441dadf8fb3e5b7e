package coder_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// TestStopWaitsForTheAgentToSettle: a real AgentAPI reports running for a
// while after an interrupt; stop returns once it reports stable, so that
// stop_agent_task's result says idle, truthfully.
func TestStopWaitsForTheAgentToSettle(t *testing.T) {
	w := newCoderWorld(t, codertest.WithLaggingInterrupt())
	ctx := context.Background()
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: "papi", Text: "long"}); err != nil {
		t.Fatal(err)
	}
	const lag = 300 * time.Millisecond
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		time.Sleep(lag)
		w.srv.Advance() // the interrupted agent's screen is still now
	}()
	start := time.Now()
	res, err := fleet.StopAgent(ctx, w.b, "papi")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < lag {
		t.Errorf("stop returned after %s, before the agent settled", d)
	}
	if res.AgentStatus != fleet.StatusIdle || res.Task.Status != fleet.RunStopped {
		t.Errorf("stop's result: %s", res.Message)
	}
	<-settled
}
