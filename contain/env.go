package contain

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Credentials are the environment variables agentinfra itself reads its
// own credentials from: no agent process, nor a command it may have
// written (the Slack command registry), ever receives them. The list is
// what agentinfra's source reads (TestCredentialsAreWhatAgentinfraReads
// scans it for every variable named *TOKEN*, *SECRET*, *PASSWORD*), plus
// any AGENTINFRA_ variable named so.
var Credentials = []string{
	"SLACK_APP_TOKEN",     // slack/tokens.go: Socket Mode
	"SLACK_BOT_TOKEN",     // slack/tokens.go: the Web API
	"CODER_SESSION_TOKEN", // fleet/coder/config.go: the Coder backend
}

// credential reports whether the variable name holds one of agentinfra's
// credentials.
func credential(name string) bool {
	if slices.Contains(Credentials, name) {
		return true
	}
	if rest, ok := strings.CutPrefix(name, "AGENTINFRA_"); ok {
		for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL"} {
			if strings.Contains(rest, w) {
				return true
			}
		}
	}
	return false
}

var (
	concealedMu sync.Mutex
	concealed   []string
)

// Conceal marks secrets this process read from elsewhere than the
// environment (the OS keyring, a token file): a variable holding one of
// them, whatever its name, is not passed to a child either.
func Conceal(secrets ...string) {
	concealedMu.Lock()
	defer concealedMu.Unlock()
	for _, s := range secrets {
		if len(s) >= 8 && !slices.Contains(concealed, s) { // a short value would hide unrelated variables
			concealed = append(concealed, s)
		}
	}
}

func isConcealed(value string) bool {
	concealedMu.Lock()
	defer concealedMu.Unlock()
	for _, s := range concealed {
		if strings.Contains(value, s) {
			return true
		}
	}
	return false
}

// EnvRules are what the user's allowlist file says agents' environments
// hold (its supervision section):
//
//	supervision:
//	  env: allowlist        # inherit (the default) | allowlist
//	  pass_env: [GOPATH, GOFLAGS, GITHUB_TOKEN]
//
// With env: allowlist an agent gets only the variables of pass_env, what
// every program needs (PATH, HOME, the locale, the terminal, the proxy
// and certificate settings) and what its CLI needs (CLINeeds); otherwise
// the whole environment. Either way never agentinfra's credentials.
type EnvRules struct {
	Env     string   `yaml:"env"`
	PassEnv []string `yaml:"pass_env"`
}

// Env modes.
const (
	EnvInherit   = "inherit"
	EnvAllowlist = "allowlist"
)

// basicEnv is what every program needs to run, in allowlist mode. A
// trailing * is a prefix.
var basicEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CI",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	// agentinfra's own, for the agent's use of agentinfra: where the CLIs
	// and the workspace are, the agent's name (no credential).
	"AGENTINFRA_TOOLS", "AGENTINFRA_ROOT", "AGENTINFRA_AGENT", EnvRun,
}

// CLINeeds are, per CLI, the variables it reads to reach its provider and
// keep its state (docs/supervision.md, "Containment").
var CLINeeds = map[string][]string{
	"claude": {"ANTHROPIC_*", "CLAUDE_*", "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING"},
	"codex":  {"OPENAI_*", "CODEX_*"},
	"gemini": {"GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI"},
}

// matches reports whether name is one of patterns (a trailing * is a prefix).
func matches(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// ChildEnv builds the environment of a process agentinfra starts for an
// agent, or for a command an agent may have written: the inherited one
// (none when clean) — in the user's allowlist mode only the variables it
// passes and those cli needs ("" for none) — then adds, KEY=VALUE entries
// that replace inherited ones of the same key. agentinfra's credentials
// and concealed secrets are left out of both. It is the one function that
// does this (Setup for the agent CLIs, the registry's commands).
func ChildEnv(cli string, clean bool, adds ...[]string) []string {
	var base []string
	if !clean {
		base = os.Environ()
		if r := UserEnvRules(os.Getenv); r.Env == EnvAllowlist {
			pass := slices.Concat(basicEnv, CLINeeds[cli], r.PassEnv)
			base = slices.DeleteFunc(base, func(kv string) bool {
				k, _, _ := strings.Cut(kv, "=")
				return !matches(k, pass)
			})
		}
	}
	idx := map[string]int{}
	out := make([]string, 0, len(base)+8)
	put := func(kv string) {
		k, v, _ := strings.Cut(kv, "=")
		if credential(k) || isConcealed(v) {
			return
		}
		if i, ok := idx[k]; ok {
			out[i] = kv
			return
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		put(kv)
	}
	for _, a := range adds {
		for _, kv := range a {
			put(kv)
		}
	}
	return out
}

// AllowlistFile is the user's allowlist's name in its config folder.
const AllowlistFile = "allowlist.yaml"

// UserEnvRules reads the supervision section of the user's allowlist
// ($AGENTINFRA_CONFIG_DIR, else $XDG_CONFIG_HOME/agentinfra, else
// ~/.config/agentinfra, as the policy reads it). No file, or none that
// says allowlist, is inherit; a file that cannot be read or parsed is
// allowlist with nothing passed: a person who wrote one wanted less, not
// more.
func UserEnvRules(getenv func(string) string) EnvRules {
	dir := UserConfigDir(getenv)
	if dir == "" {
		return EnvRules{Env: EnvInherit}
	}
	b, err := os.ReadFile(filepath.Join(dir, AllowlistFile))
	if os.IsNotExist(err) {
		return EnvRules{Env: EnvInherit}
	}
	var f struct {
		Supervision EnvRules `yaml:"supervision"`
	}
	if err != nil || yaml.Unmarshal(b, &f) != nil {
		return EnvRules{Env: EnvAllowlist}
	}
	switch f.Supervision.Env {
	case "", EnvInherit:
		return EnvRules{Env: EnvInherit, PassEnv: f.Supervision.PassEnv}
	case EnvAllowlist:
		return f.Supervision
	}
	return EnvRules{Env: EnvAllowlist, PassEnv: f.Supervision.PassEnv} // an unknown mode: the safe one
}
