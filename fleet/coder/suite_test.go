package coder_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/workspace"
)

// coderWorld is the Coder backend against the fake Coder, whose clock
// moves only when the suite steps it.
type coderWorld struct {
	ws  *workspace.Workspace
	srv *codertest.Server
	b   *coder.Backend
}

func (w *coderWorld) Backend() fleet.Backend          { return w.b }
func (w *coderWorld) Workspace() *workspace.Workspace { return w.ws }
func (w *coderWorld) Step(testing.TB)                 { w.srv.Advance() }

// AddRuns gives the agent n tasks through the backend, each finished by
// the fake's clock: the history is what the backend recorded.
func (w *coderWorld) AddRuns(t testing.TB, name string, n int) []string {
	var ids []string
	for range n {
		res, err := w.b.Start(context.Background(), fleet.StartInput{Name: name, Text: "run"})
		if err != nil {
			t.Fatal(err)
		}
		fleettest.WaitStatus(t, w, name, fleet.StatusIdle)
		ids = append(ids, res.Task.ID)
	}
	return ids
}

// Unavailable lists the agents while Coder answers 503.
func (w *coderWorld) Unavailable(t testing.TB) error {
	w.srv.SetFault(codertest.RouteWorkspaces, codertest.Fault5xx)
	defer w.srv.SetFault(codertest.RouteWorkspaces, codertest.NoFault)
	_, err := w.b.List(context.Background(), fleet.ListFilter{})
	return err
}

func newCoderWorld(t *testing.T, opts ...codertest.Option) *coderWorld {
	srv := codertest.New(t, opts...)
	ws := fleettest.NewRepo(t)
	env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}
	b, err := coder.OpenBackend(ws, coder.BackendOptions{Getenv: func(k string) string { return env[k] },
		HTTPClient: srv.HTTPClient(), Timeout: srv.Config().Timeout})
	if err != nil {
		t.Fatal(err)
	}
	return &coderWorld{ws: ws, srv: srv, b: b}
}

// The fake answers in +01:00 with nanoseconds, as real deployments may:
// every result must still give UTC to the millisecond (the schema of
// ResultsMatchTheDesignSchemas).
func TestBackendSuiteCoder(t *testing.T) {
	fleettest.Run(t, func(t *testing.T) fleettest.World {
		return newCoderWorld(t, codertest.WithClockIn(time.FixedZone("CET", 3600)))
	})
}

func TestBackendSuiteCoderSubdomainApps(t *testing.T) {
	fleettest.Run(t, func(t *testing.T) fleettest.World { return newCoderWorld(t, codertest.WithSubdomainApps()) })
}
