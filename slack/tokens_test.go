package slack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/agentinfra/agentinfra/agenterr"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTokensFromTheEnvironment(t *testing.T) {
	keyring.MockInitWithError(errors.New("the keyring must not be asked"))
	tk, err := TokenSource{Getenv: env(map[string]string{EnvAppToken: "xapp-1-env", EnvBotToken: "xoxb-env"})}.Load(context.Background())
	if err != nil || tk.App != "xapp-1-env" || tk.Bot != "xoxb-env" || tk.AppFrom != "environment" {
		t.Fatalf("%+v %v", tk, err)
	}
}

func TestTokensFromTheKeyring(t *testing.T) {
	keyring.MockInit()
	if err := KeyringSet(context.Background(), KeyringAppAccount, "xapp-1-kr", 0); err != nil {
		t.Fatal(err)
	}
	if err := KeyringSet(context.Background(), KeyringBotAccount, "xoxb-kr", 0); err != nil {
		t.Fatal(err)
	}
	// The environment wins where it has one.
	tk, err := TokenSource{Getenv: env(map[string]string{EnvBotToken: "xoxb-env"})}.Load(context.Background())
	if err != nil || tk.App != "xapp-1-kr" || tk.AppFrom != "keyring" || tk.Bot != "xoxb-env" || tk.BotFrom != "environment" {
		t.Fatalf("%+v %v", tk, err)
	}
}

func TestNoTokensNamesBoth(t *testing.T) {
	keyring.MockInit()
	_, err := TokenSource{Getenv: env(nil)}.Load(context.Background())
	if !errors.Is(err, ErrNoTokens) || !strings.Contains(err.Error(), EnvAppToken) || !strings.Contains(err.Error(), EnvBotToken) || !strings.Contains(err.Error(), "keyring") {
		t.Fatalf("%v", err)
	}
	if agenterr.ExitCode(err) != 6 {
		t.Errorf("exit code %d for missing tokens; want 6 (unavailable)", agenterr.ExitCode(err))
	}
}

func TestAHungKeyringTimesOut(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	ts := TokenSource{Getenv: env(nil), Timeout: 100 * time.Millisecond,
		KeyringGet: func(service, account string) (string, error) { <-hang; return "", nil }}
	// The keyring never answers: Load returns only through its timeout.
	_, err := ts.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") || !strings.Contains(err.Error(), EnvAppToken) || !strings.Contains(err.Error(), EnvBotToken) {
		t.Fatalf("%v", err)
	}
}

func TestAnAppTokenThatIsNotOne(t *testing.T) {
	_, err := TokenSource{Getenv: env(map[string]string{EnvAppToken: "xoxb-wrong", EnvBotToken: "xoxb-env"})}.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "xapp-") {
		t.Fatalf("%v", err)
	}
}
