package agentcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// loadPolicy is the policy of a workspace holding policyYAML, with the
// user's allowlist allowYAML ("" = no file).
func loadPolicy(t *testing.T, policyYAML, allowYAML string) *policy.Policy {
	t.Helper()
	root := t.TempDir()
	paths := policy.Paths{Workspace: filepath.Join(root, ".agent", policy.FileName), Allowlist: filepath.Join(t.TempDir(), policy.AllowlistName)}
	if err := os.MkdirAll(filepath.Dir(paths.Workspace), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{paths.Workspace: policyYAML, paths.Allowlist: allowYAML} {
		if text != "" {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return policy.Load(root, paths)
}

// Each CLI is told to allow by itself only what the policy and the
// allowlist approve and it can express: claude's and gemini's read-only
// tools, and the exact commands (never a glob: the bridge sees those).
func TestNativeRules(t *testing.T) {
	p := loadPolicy(t, "auto_approve:\n  commands: [\"git status\", \"go test *\", \"touch ok.txt\", \"rm -rf *\"]\n  tools: [Read, Grep, web_fetch, read_file]\n  max_risk: low\n",
		"commands: [\"git *\", \"go test *\", \"touch *\"]\n")
	if len(p.Warnings) > 0 {
		t.Fatal(p.Warnings)
	}
	if got, want := claude.Settings(p), `{"permissions":{"allow":["Read","Grep","Bash(git status)","Bash(touch ok.txt)"]}}`; got != want {
		t.Errorf("claude settings:\n got %s\nwant %s", got, want)
	}
	toml := gemini.PolicyTOML(p)
	for _, want := range []string{"toolName = \"run_shell_command\"\ncommandRegex = \"^touch ok\\\\.txt$\"", "toolName = \"read_file\"", "decision = \"allow\""} {
		if !strings.Contains(toml, want) {
			t.Errorf("gemini policy lacks %q:\n%s", want, toml)
		}
	}
	if strings.Contains(toml, "go test") || strings.Contains(toml, "rm -rf") {
		t.Errorf("gemini policy allows a glob or a risky command:\n%s", toml)
	}
}

// A policy that does not parse asks for everything: no CLI is told to
// allow anything by itself.
func TestNativeRulesOfABrokenPolicy(t *testing.T) {
	p := loadPolicy(t, "auto_approve:\n  tools: [Read\n", "commands: [\"*\"]\n")
	if !p.AskAll {
		t.Fatalf("a broken policy does not ask for everything: %+v", p.Warnings)
	}
	if got := claude.Settings(p); got != `{"permissions":{"allow":[]}}` {
		t.Errorf("claude settings under a broken policy: %s", got)
	}
	if got := gemini.PolicyTOML(p); got != "" {
		t.Errorf("gemini policy under a broken policy: %q", got)
	}
}

// The registry knows every CLI runner.CLIs names, and only those.
func TestRegistryHasEveryCLI(t *testing.T) {
	for _, name := range []string{"gemini", "claude", "codex", "", "Claude"} {
		c, err := For(name)
		if err != nil || c.Runner == nil || c.Bridge == nil || (name != "" && !strings.EqualFold(c.Name, name)) {
			t.Errorf("For(%q) = %+v, %v", name, c, err)
		}
	}
	if _, err := For("aider"); err == nil {
		t.Error("an unknown CLI was found")
	}
	if err := CheckPrompt("gemini", strings.Repeat("\"", gemini.PromptLimit)); err == nil {
		t.Error("gemini took a prompt over its limit")
	}
	if err := CheckPrompt("claude", strings.Repeat("\"", gemini.PromptLimit)); err != nil {
		t.Errorf("claude has no prompt limit: %v", err)
	}
}
