package full

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/agentinfra/agentinfra/slack"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSlackWithoutTokensSaysWhereItLooked(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".agent"), 0o755)
	code, _, stderr := runCLI(t, dir, cliOpts{}, "slack")
	if code == 0 || !strings.Contains(stderr, "SLACK_APP_TOKEN") || !strings.Contains(stderr, "SLACK_BOT_TOKEN") || !strings.Contains(stderr, "keyring") {
		t.Fatalf("code %d: %s", code, stderr)
	}
}

func TestSlackLoginStoresTheTokensInTheKeyring(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, cliOpts{Stdin: "xoxb-swapped\nxapp-1-x\n"}, "slack", "login")
	if code != 2 || !strings.Contains(stderr, "xapp-") {
		t.Fatalf("swapped tokens: code %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, dir, cliOpts{Stdin: "xapp-1-app\nxoxb-bot\n"}, "slack", "login")
	if code != 0 || !strings.Contains(stdout, "Stored both tokens") {
		t.Fatalf("code %d: %s %s", code, stdout, stderr)
	}
	tk, err := slack.TokenSource{Getenv: func(string) string { return "" }}.Load(context.Background())
	if err != nil || tk.App != "xapp-1-app" || tk.Bot != "xoxb-bot" {
		t.Fatalf("%+v %v", tk, err)
	}
}

func TestSlackChannelOfASession(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".agent"), 0o755)
	ws, _ := workspace.Find(dir, "--root", dir)
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ses, _ := st.CreateSession(context.Background(), store.NewSession{Owner: "ana", Mode: store.ModeRemote})
	// Where a session posts is its owner's (or an operator's) to change.
	mallory := cliOpts{Env: map[string]string{"AGENTINFRA_USER": "mallory"}}
	if code, _, stderr := runCLI(t, dir, mallory, "slack", "channel", "1", "C0MINE"); code != 7 || !strings.Contains(stderr, "@mallory may not change the channel of session 1") {
		t.Fatalf("a stranger sets the channel: code %d: %s", code, stderr)
	}
	ana := cliOpts{Env: map[string]string{"AGENTINFRA_USER": "ana"}}
	if code, _, stderr := runCLI(t, dir, ana, "slack", "channel", "1", "C0OTHER"); code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	if got, _ := st.Session(context.Background(), ses.ID); got.Channel != "C0OTHER" {
		t.Fatalf("channel %q", got.Channel)
	}
	if code, _, _ := runCLI(t, dir, ana, "slack", "channel", "9", "C0OTHER"); code == 0 {
		t.Fatal("an unknown session's channel was set")
	}
}
