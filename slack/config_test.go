package slack

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/workspace"
)

// The slack section comes from the one decoded config, with its defaults;
// a config.yaml that links out of the workspace is not read.
func TestLoadConfig(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".agent"), 0o755)
	ws, _ := workspace.New(root)
	os.WriteFile(ws.ConfigPath(), []byte("slack:\n  channel: C1\n  users: {ana: U1}\n"), 0o644)
	c, err := LoadConfig(ws)
	if err != nil || c.Channel != "C1" || c.mention("@ana") != "<@U1>" || c.InlineDiffLines != DefaultInlineDiffLines || c.EscalationMention != DefaultEscalationMention {
		t.Fatalf("config %+v, %v", c, err)
	}

	outside := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(outside, []byte("slack:\n  channel: C2\n"), 0o644)
	os.Remove(ws.ConfigPath())
	os.Symlink(outside, ws.ConfigPath())
	ws, _ = workspace.New(root) // a new process: the config is read again
	if c, err := LoadConfig(ws); err == nil {
		t.Fatalf("read through a link out of the workspace: %+v", c)
	}
}
