package slack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// `/agentinfra run ID env` posts the command's environment in the thread:
// without the Slack tokens, whether they came from the environment or (a
// copy under another name of) what the service was given.
func TestSlashRunShowsNoToken(t *testing.T) {
	t.Setenv("AGENTINFRA_CONFIG_DIR", t.TempDir())
	t.Setenv("SLACK_BOT_TOKEN", fakeslack.BotToken)
	t.Setenv("SLACK_APP_TOKEN", fakeslack.AppToken)
	t.Setenv("MY_COPY_OF_THE_APP_TOKEN", fakeslack.AppToken)
	t.Setenv("ZZ_LAST", "visible") // env prints in order: the tokens, set before it, are in the kept tail too
	w := newWorld(t, testConfig())
	os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755)
	os.WriteFile(filepath.Join(w.dbDir, ".agent", "policy.yaml"), []byte("commands:\n  env: env\n"), 0o644)
	remote := w.session(store.ModeRemote)
	w.message("Session ")
	if got := w.slash(bo, fmt.Sprintf("run %d env", remote.ID)); !strings.Contains(got, "Running `env`") {
		t.Fatalf("run: %q", got)
	}
	out := w.message("`env` (env)").Last().Text
	if !strings.Contains(out, "ZZ_LAST=visible") {
		t.Fatalf("the command's output is not in the thread: %q", out)
	}
	for _, tok := range []string{fakeslack.BotToken, fakeslack.AppToken, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "MY_COPY"} {
		if strings.Contains(out, tok) {
			t.Errorf("the thread shows %s:\n%s", tok, out)
		}
	}
}
