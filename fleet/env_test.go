package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The agent CLI a fleet's supervisor starts never gets agentinfra's
// credentials (the supervisor inherits them from whoever started the
// agent); with the allowlist's env: allowlist only what is passed.
func TestFleetAgentGetsNoCredentials(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bot-secret")
	t.Setenv("SLACK_APP_TOKEN", "xapp-app-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-personal")
	t.Setenv("KEEP_ME", "kept")
	for _, mode := range []string{"inherit", "allowlist"} {
		t.Run(mode, func(t *testing.T) {
			config := t.TempDir()
			os.WriteFile(filepath.Join(config, "allowlist.yaml"), []byte("supervision:\n  env: "+mode+"\n  pass_env: [KEEP_ME]\n"), 0o600)
			t.Setenv("AGENTINFRA_CONFIG_DIR", config)
			ws := newRepo(t)
			envFile := filepath.Join(t.TempDir(), "env")
			f := testFleet(t, ws, "STUB_MODE=ok", "STUB_ENVFILE="+envFile)
			if _, err := f.Create(context.Background(), CreateInput{Name: "papi", Spec: "keep the tests green"}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, f, "papi", StatusIdle)
			b, err := os.ReadFile(envFile)
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for _, kv := range strings.Split(string(b), "\x00") {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} {
				if v, ok := env[k]; ok {
					t.Errorf("the agent got %s=%s", k, v)
				}
			}
			if env["KEEP_ME"] != "kept" || env["PATH"] == "" || env["STUB_MODE"] != "ok" || env["AGENTINFRA_AGENT"] != "papi" {
				t.Errorf("the agent lacks what it is given: KEEP_ME %q PATH %q STUB_MODE %q AGENTINFRA_AGENT %q", env["KEEP_ME"], env["PATH"], env["STUB_MODE"], env["AGENTINFRA_AGENT"])
			}
			if _, got := env["GITHUB_TOKEN"]; got != (mode == "inherit") {
				t.Errorf("GITHUB_TOKEN passed: %v, in %s mode", got, mode)
			}
		})
	}
}
