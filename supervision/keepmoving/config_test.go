package keepmoving

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/workspace"
)

func configWorkspace(t *testing.T, src string) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// The keep-moving settings come from the one decoded config: written
// values as written, the rest their defaults; a wrong value names the
// file, line, column and key.
func TestLoadConfig(t *testing.T) {
	ws := configWorkspace(t, "supervision:\n  watchdog: {threshold: 90s}\n  prompts: {stop_status: blocked}\n")
	c, err := LoadConfig(ws)
	if err != nil {
		t.Fatal(err)
	}
	if c.Watchdog.Threshold != 90*time.Second || c.Prompts.StopStatus != "blocked" || c.Prompts.Ask != AskQuestionsAndErrors ||
		c.Prompts.Timeout != DefaultPromptTimeout || Retention(c) != DefaultRetentionDays*24*time.Hour {
		t.Errorf("config %+v", c)
	}
	_, err = LoadConfig(configWorkspace(t, "supervision:\n  prompts:\n    ask: sometimes\n"))
	if err == nil || !strings.Contains(err.Error(), ".agent/config.yaml:3:10: supervision.prompts.ask") {
		t.Errorf("a wrong ask: %v", err)
	}
}

// A config.yaml that links out of the workspace is not read.
func TestLoadConfigRefusesALinkOutOfTheWorkspace(t *testing.T) {
	ws := configWorkspace(t, "")
	outside := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(outside, []byte("supervision:\n  retention_days: 1\n"), 0o644)
	os.Remove(ws.ConfigPath())
	if err := os.Symlink(outside, ws.ConfigPath()); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadConfig(ws); err == nil {
		t.Fatalf("read through a link out of the workspace: %+v", c)
	}
}
