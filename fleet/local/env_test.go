package local

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// The agent CLI a fleet's supervisor starts never gets agentinfra's
// credentials (the supervisor inherits them from whoever started the
// agent); with the allowlist's env: allowlist only what is passed.
func TestFleetAgentGetsNoCredentials(t *testing.T) {
	for _, mode := range []string{"inherit", "allowlist"} {
		t.Run(mode, func(t *testing.T) {
			agentstub.Credentials(t, mode)
			ws := newRepo(t)
			envFile := filepath.Join(t.TempDir(), "env")
			f := testFleet(t, ws, "STUB_MODE=ok", "STUB_ENVFILE="+envFile)
			if _, err := f.Create(context.Background(), fleet.CreateInput{Name: "papi", Spec: "keep the tests green"}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, f, "papi", fleet.StatusIdle)
			env := agentstub.CheckEnv(t, envFile, mode)
			if env["STUB_MODE"] != "ok" || env["AGENTINFRA_AGENT"] != "papi" {
				t.Errorf("the agent lacks what agentinfra adds: STUB_MODE %q AGENTINFRA_AGENT %q", env["STUB_MODE"], env["AGENTINFRA_AGENT"])
			}
		})
	}
}
