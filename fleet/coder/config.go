package coder

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/contain"
)

// Environment variables, the names the coder CLI uses.
const (
	EnvURL   = "CODER_URL"
	EnvToken = "CODER_SESSION_TOKEN"
)

// DefaultTimeout bounds one request when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config says which deployment to talk to and as whom.
type Config struct {
	// URL is the deployment's access URL (https://coder.example.com).
	URL string
	// Token is a session or API token, sent as Coder-Session-Token.
	Token string
	// Timeout bounds each request (DefaultTimeout when zero).
	Timeout time.Duration
	// HTTPClient, if set, is used as is except that redirects are never
	// followed (a redirect to /login must be seen, not followed).
	HTTPClient *http.Client
}

// ConfigFrom resolves the configuration: CODER_URL and CODER_SESSION_TOKEN
// (read with getenv) win over the configured url and token file. A token
// file must be readable by its owner only.
func ConfigFrom(getenv func(string) string, configURL, tokenFile string) (Config, error) {
	cfg := Config{URL: strings.TrimSpace(getenv(EnvURL)), Token: strings.TrimSpace(getenv(EnvToken))}
	if cfg.URL == "" {
		cfg.URL = configURL
	}
	if cfg.URL == "" {
		return Config{}, invalid(EnvURL, "no Coder URL: set %s to the deployment's access URL (or coder.url in .agent/config.yaml)", EnvURL)
	}
	if cfg.Token == "" && tokenFile != "" {
		tok, err := ReadTokenFile(tokenFile)
		if err != nil {
			return Config{}, err
		}
		cfg.Token = tok
	}
	if cfg.Token == "" {
		return Config{}, &Error{Kind: KindUnauthorized, Msg: fmt.Sprintf(
			"no Coder session token: set %s (create one with `coder tokens create`) or coder.token_file in .agent/config.yaml", EnvToken)}
	}
	contain.Conceal(cfg.Token) // read from a file too: never in an agent's environment
	return cfg, nil
}

// ReadTokenFile reads a token from path, refusing a file that its group
// or others may read or write: a session token is a password.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", invalid("token_file", "cannot read the Coder token file %s: %v", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", invalid("token_file", "cannot stat the Coder token file %s: %v", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", invalid("token_file", "the Coder token file %s has mode %04o, so others may read it: run `chmod 600 %s`", path, perm, path)
	}
	if !st.Mode().IsRegular() {
		return "", invalid("token_file", "the Coder token file %s is not a regular file", path)
	}
	buf, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", invalid("token_file", "cannot read the Coder token file %s: %v", path, err)
	}
	tok := strings.TrimSpace(string(buf))
	if tok == "" {
		return "", invalid("token_file", "the Coder token file %s is empty", path)
	}
	return tok, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalid(EnvURL, "Coder URL %q is not an http(s) URL like https://coder.example.com", raw)
	}
	if u.User != nil {
		return nil, invalid(EnvURL, "Coder URL %q carries credentials: give the token in %s instead", u.Redacted(), EnvToken)
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}
