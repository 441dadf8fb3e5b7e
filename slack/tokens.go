package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Where tokens come from.
const (
	EnvAppToken = "SLACK_APP_TOKEN" // xapp-…: the app-level token (connections:write), for Socket Mode
	EnvBotToken = "SLACK_BOT_TOKEN" // xoxb-…: the bot token, for the Web API
	// KeyringService is the OS keyring's service; the accounts are
	// "app-token" and "bot-token".
	KeyringService    = "agentinfra-slack"
	KeyringAppAccount = "app-token"
	KeyringBotAccount = "bot-token"
	// KeyringTimeout bounds each keyring call: without a desktop session
	// (an SSH login, a container) the Secret Service call can hang.
	KeyringTimeout = 3 * time.Second
)

// Tokens are the two tokens a Socket Mode app needs.
type Tokens struct {
	App, Bot string
	// From says where each came from ("environment" or "keyring").
	AppFrom, BotFrom string
}

// ErrNoTokens: neither the environment nor the keyring has a token. It is
// of the unavailable kind (exit code 6): Slack cannot be reached until the
// tokens are set.
var ErrNoTokens = agenterr.New(agenterr.Unavailable, "no Slack tokens")

// TokenSource reads tokens: the environment first, then the OS keyring,
// each keyring call under Timeout.
type TokenSource struct {
	Getenv func(string) string
	// KeyringGet reads a secret (nil = go-keyring's Get).
	KeyringGet func(service, account string) (string, error)
	Timeout    time.Duration
}

// Load finds both tokens or says where it looked.
func (ts TokenSource) Load(ctx context.Context) (Tokens, error) {
	var t Tokens
	var errs []string
	for _, x := range []struct {
		env, account string
		val, from    *string
	}{{EnvAppToken, KeyringAppAccount, &t.App, &t.AppFrom}, {EnvBotToken, KeyringBotAccount, &t.Bot, &t.BotFrom}} {
		if v := strings.TrimSpace(ts.Getenv(x.env)); v != "" {
			*x.val, *x.from = v, "environment"
			continue
		}
		v, err := ts.keyring(ctx, x.account)
		if err == nil && v != "" {
			*x.val, *x.from = v, "keyring"
			continue
		}
		switch {
		case err == nil, errors.Is(err, keyring.ErrNotFound):
			errs = append(errs, fmt.Sprintf("%s is not set and the OS keyring has no %q in service %q", x.env, x.account, KeyringService))
		default:
			errs = append(errs, fmt.Sprintf("%s is not set and the OS keyring could not be read: %v", x.env, err))
		}
	}
	if len(errs) > 0 {
		return Tokens{}, fmt.Errorf("%w: %s; set %s (xapp-…) and %s (xoxb-…), or store them with `agentinfra slack login` (docs/slack.md)",
			ErrNoTokens, strings.Join(errs, "; "), EnvAppToken, EnvBotToken)
	}
	if !strings.HasPrefix(t.App, "xapp-") {
		return Tokens{}, fmt.Errorf("the app-level token (from the %s) does not start with xapp-: Socket Mode needs an app-level token with connections:write (docs/slack.md)", t.AppFrom)
	}
	return t, nil
}

// keyring reads one secret, giving up after the timeout (the goroutine of
// a hung call is left behind: go-keyring offers no way to cancel it).
func (ts TokenSource) keyring(ctx context.Context, account string) (string, error) {
	get := ts.KeyringGet
	if get == nil {
		get = keyring.Get
	}
	timeout := ts.Timeout
	if timeout <= 0 {
		timeout = KeyringTimeout
	}
	type result struct {
		v   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := get(KeyringService, account)
		ch <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-t.C:
		return "", fmt.Errorf("the OS keyring did not answer within %s (no desktop session to unlock it?)", timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// KeyringSet stores a secret, under the same timeout.
func KeyringSet(ctx context.Context, account, secret string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = KeyringTimeout
	}
	ch := make(chan error, 1)
	go func() { ch <- keyring.Set(KeyringService, account, secret) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-ch:
		return err
	case <-t.C:
		return fmt.Errorf("the OS keyring did not answer within %s (no desktop session to unlock it?): use %s and %s instead", timeout, EnvAppToken, EnvBotToken)
	case <-ctx.Done():
		return ctx.Err()
	}
}
