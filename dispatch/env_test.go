package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// The agent a dispatch starts never gets agentinfra's credentials from
// the dispatcher's environment (issue 27, item 11); with the allowlist's
// env: allowlist it gets only what is passed, and what agentinfra adds.
func TestDispatchedAgentGetsNoCredentials(t *testing.T) {
	bin := agentstub.Build(t)
	for _, mode := range []string{"inherit", "allowlist"} {
		t.Run(mode, func(t *testing.T) {
			agentstub.Credentials(t, mode)
			ws := dispatchWorkspace(t)
			envFile := filepath.Join(t.TempDir(), "env")
			if _, err := Run(context.Background(), ws, stubOptions(bin, "a1a1a1", "STUB_MODE=ok", "STUB_ENVFILE="+envFile), nil); err != nil {
				t.Fatal(err)
			}
			env := agentstub.CheckEnv(t, envFile, mode)
			if env["STUB_MODE"] != "ok" || !strings.HasPrefix(env["AGENTINFRA_RUN"], "a1a1a1-") {
				t.Errorf("the agent lacks what agentinfra adds: STUB_MODE %q AGENTINFRA_RUN %q", env["STUB_MODE"], env["AGENTINFRA_RUN"])
			}
		})
	}
}
