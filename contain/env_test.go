package contain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envOf turns KEY=VALUE entries into a map.
func envOf(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// userConfig points the user's config folder at a new one holding an
// allowlist with content ("" for none).
func userConfig(t *testing.T, content string) {
	t.Helper()
	dir := t.TempDir()
	if content != "" {
		if err := os.WriteFile(filepath.Join(dir, AllowlistFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AGENTINFRA_CONFIG_DIR", dir)
}

func setCredentials(t *testing.T) {
	for k, v := range map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-bot-secret", "SLACK_APP_TOKEN": "xapp-app-secret", "CODER_SESSION_TOKEN": "coder-secret",
		"AGENTINFRA_CONSOLE_TOKEN": "console-secret", "GITHUB_TOKEN": "ghp-github", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-openai",
		"KEEP_ME": "kept",
	} {
		t.Setenv(k, v)
	}
}

func TestChildEnvLeavesOutAgentinfrasCredentials(t *testing.T) {
	userConfig(t, "")
	setCredentials(t)
	env := envOf(ChildEnv("claude", false, []string{"EXTRA=1", "SLACK_BOT_TOKEN=xoxb-added"}))
	for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "CODER_SESSION_TOKEN", "AGENTINFRA_CONSOLE_TOKEN"} {
		if v, ok := env[k]; ok {
			t.Errorf("the child got %s=%s", k, v)
		}
	}
	for k, v := range map[string]string{"GITHUB_TOKEN": "ghp-github", "OPENAI_API_KEY": "sk-openai", "EXTRA": "1", "PATH": os.Getenv("PATH")} {
		if env[k] != v {
			t.Errorf("%s = %q, want %q (without allowlist mode the rest is inherited)", k, env[k], v)
		}
	}
	if clean := ChildEnv("claude", true, []string{"A=1"}); strings.Join(clean, " ") != "A=1" {
		t.Errorf("a clean environment: %v", clean)
	}
}

// In allowlist mode a CLI gets what every program needs, what it needs
// itself, and what the allowlist passes; nothing else inherited. What the
// caller adds (the run's marker, the CLI's settings) stays.
func TestChildEnvAllowlistMode(t *testing.T) {
	userConfig(t, "commands: [\"git *\"]\nsupervision:\n  env: allowlist\n  pass_env: [KEEP_ME]\n")
	setCredentials(t)
	t.Setenv("LC_ALL", "C.UTF-8")
	claude := envOf(ChildEnv("claude", false, []string{"AGENTINFRA_RUN=r1", "GEMINI_SYSTEM_MD=/x"}))
	for k, v := range map[string]string{"PATH": os.Getenv("PATH"), "LC_ALL": "C.UTF-8", "KEEP_ME": "kept", "ANTHROPIC_API_KEY": "sk-ant",
		"AGENTINFRA_RUN": "r1", "GEMINI_SYSTEM_MD": "/x"} {
		if claude[k] != v {
			t.Errorf("claude: %s = %q, want %q", k, claude[k], v)
		}
	}
	for _, k := range []string{"GITHUB_TOKEN", "OPENAI_API_KEY", "SLACK_BOT_TOKEN"} {
		if _, ok := claude[k]; ok {
			t.Errorf("claude got %s in allowlist mode", k)
		}
	}
	codex := envOf(ChildEnv("codex", false))
	if codex["OPENAI_API_KEY"] != "sk-openai" || codex["ANTHROPIC_API_KEY"] != "" {
		t.Errorf("codex: OPENAI_API_KEY %q, ANTHROPIC_API_KEY %q: each CLI gets its own keys only", codex["OPENAI_API_KEY"], codex["ANTHROPIC_API_KEY"])
	}
	// A registry command (no CLI): none of the keys.
	if cmd := envOf(ChildEnv("", false)); cmd["ANTHROPIC_API_KEY"] != "" || cmd["KEEP_ME"] != "kept" {
		t.Errorf("a command: %v", cmd)
	}
}

func TestUserEnvRules(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"", EnvInherit},
		{"commands: [\"git *\"]\n", EnvInherit},
		{"supervision:\n  env: inherit\n", EnvInherit},
		{"supervision:\n  env: allowlist\n", EnvAllowlist},
		{"supervision:\n  env: everything\n", EnvAllowlist}, // unknown: the safe one
		{"supervision: [\n", EnvAllowlist},                  // does not parse: the safe one
	} {
		userConfig(t, c.file)
		if got := UserEnvRules(os.Getenv).Env; got != c.want {
			t.Errorf("%q: %s, want %s", c.file, got, c.want)
		}
	}
}

// A secret read from the keyring or a file is left out under any name.
func TestConcealedValuesAreLeftOut(t *testing.T) {
	userConfig(t, "")
	t.Setenv("MY_COPY", "prefix-xoxb-from-the-keyring-1234")
	t.Setenv("SHORT", "abc")
	Conceal("xoxb-from-the-keyring-1234", "abc")
	env := envOf(ChildEnv("", false))
	if _, ok := env["MY_COPY"]; ok {
		t.Error("a variable holding a concealed secret was passed")
	}
	if env["SHORT"] != "abc" {
		t.Error("a short value (not a secret) was concealed")
	}
}

// The credentials list is what agentinfra reads: every variable name in
// its source (string literals, tests and test helpers aside) that names a
// token, a secret or a password is one of them.
func TestCredentialsAreWhatAgentinfraReads(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[A-Z][A-Z0-9]*_[A-Z0-9_]+$`)
	found := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "node_modules" || rel == filepath.Join("internal", "testing") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && name.MatchString(s) {
					for _, w := range []string{"TOKEN", "SECRET", "PASSWORD"} {
						if strings.Contains(s, w) {
							found[s] = rel
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "CODER_SESSION_TOKEN"} {
		if found[c] == "" {
			t.Errorf("the scan did not find %s: it does not read the source", c)
		}
	}
	for s, file := range found {
		if !credential(s) {
			t.Errorf("%s (%s) is not in contain.Credentials: an agent would receive it", s, file)
		}
	}
	if len(Credentials) != len(slices.Compact(slices.Sorted(slices.Values(Credentials)))) {
		t.Errorf("Credentials lists a name twice: %v", Credentials)
	}
}
