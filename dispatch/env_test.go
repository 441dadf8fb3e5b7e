package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// agentEnv is the environment the stub agent saw (STUB_ENVFILE).
func agentEnv(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// The agent a dispatch starts never gets agentinfra's credentials from
// the dispatcher's environment (issue 27, item 11); with the allowlist's
// env: allowlist it gets only what is passed, and what agentinfra adds.
func TestDispatchedAgentGetsNoCredentials(t *testing.T) {
	bin := agentstub.Build(t)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bot-secret")
	t.Setenv("SLACK_APP_TOKEN", "xapp-app-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-personal")
	t.Setenv("KEEP_ME", "kept")
	for _, mode := range []string{"inherit", "allowlist"} {
		t.Run(mode, func(t *testing.T) {
			config := t.TempDir()
			os.WriteFile(filepath.Join(config, "allowlist.yaml"), []byte("supervision:\n  env: "+mode+"\n  pass_env: [KEEP_ME]\n"), 0o600)
			t.Setenv("AGENTINFRA_CONFIG_DIR", config)
			ws := dispatchWorkspace(t)
			envFile := filepath.Join(t.TempDir(), "env")
			if _, err := Run(context.Background(), ws, stubOptions(bin, "a1a1a1", "STUB_MODE=ok", "STUB_ENVFILE="+envFile), nil); err != nil {
				t.Fatal(err)
			}
			env := agentEnv(t, envFile)
			for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} {
				if v, ok := env[k]; ok {
					t.Errorf("the agent got %s=%s", k, v)
				}
			}
			if env["KEEP_ME"] != "kept" || env["PATH"] == "" || env["STUB_MODE"] != "ok" || !strings.HasPrefix(env["AGENTINFRA_RUN"], "a1a1a1-") {
				t.Errorf("the agent lacks what it is given: KEEP_ME %q PATH %q STUB_MODE %q AGENTINFRA_RUN %q", env["KEEP_ME"], env["PATH"], env["STUB_MODE"], env["AGENTINFRA_RUN"])
			}
			if _, got := env["GITHUB_TOKEN"]; got != (mode == "inherit") {
				t.Errorf("GITHUB_TOKEN passed: %v, in %s mode", got, mode)
			}
		})
	}
}
