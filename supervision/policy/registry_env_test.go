package policy

import (
	"context"
	"strings"
	"testing"
)

// A registry command may run code an agent wrote: it never sees
// agentinfra's credentials (issue 29, item 2: `/agentinfra run 1 env`
// posted both Slack tokens).
func TestRegistryCommandsGetNoCredentials(t *testing.T) {
	t.Setenv("AGENTINFRA_CONFIG_DIR", t.TempDir())
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bot-secret")
	t.Setenv("SLACK_APP_TOKEN", "xapp-app-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-kept")
	r, err := newRegistry(map[string]string{"env": "env"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Run(context.Background(), "env", t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "xoxb-") || strings.Contains(string(out), "xapp-") {
		t.Fatalf("a registry command saw the Slack tokens:\n%s", out)
	}
	if !strings.Contains(string(out), "GITHUB_TOKEN=ghp-kept") {
		t.Fatalf("the rest of the environment is the command's (no allowlist mode):\n%s", out)
	}
}
