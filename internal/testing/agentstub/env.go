package agentstub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Credentials puts agentinfra's credentials (the Slack tokens), a person's
// own token (GITHUB_TOKEN) and KEEP_ME in the test's environment, and a
// user config whose allowlist sets supervision.env to mode (inherit or
// allowlist) and passes KEEP_ME. The stub started with STUB_ENVFILE=file
// then writes what it got, which CheckEnv checks.
func Credentials(t *testing.T, mode string) {
	t.Helper()
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bot-secret")
	t.Setenv("SLACK_APP_TOKEN", "xapp-app-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-personal")
	t.Setenv("KEEP_ME", "kept")
	config := t.TempDir()
	if err := os.WriteFile(filepath.Join(config, "allowlist.yaml"), []byte("supervision:\n  env: "+mode+"\n  pass_env: [KEEP_ME]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTINFRA_CONFIG_DIR", config)
}

// CheckEnv reads the environment the stub wrote to file (STUB_ENVFILE)
// and checks it against Credentials(mode): no Slack token, KEEP_ME and
// PATH there, GITHUB_TOKEN only in inherit mode. It returns the
// environment for the caller's own checks.
func CheckEnv(t *testing.T, file, mode string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
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
	if env["KEEP_ME"] != "kept" || env["PATH"] == "" {
		t.Errorf("the agent lacks what is passed: KEEP_ME %q, PATH %q", env["KEEP_ME"], env["PATH"])
	}
	if _, got := env["GITHUB_TOKEN"]; got != (mode == "inherit") {
		t.Errorf("GITHUB_TOKEN passed: %v, in %s mode", got, mode)
	}
	return env
}
