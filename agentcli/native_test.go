package agentcli

import (
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
)

// No CLI is told to allow anything by itself, whatever the policy says:
// claude gets an ask rule for every tool, gemini an admin policy whose
// every rule asks — the shell's with an argsPattern, so that gemini's "known
// safe command" shortcut cannot turn it into allow. What the policy
// approves, the bridge answers at once.
func TestNativeRulesAskForEverything(t *testing.T) {
	if got, want := claude.Settings(), `{"permissions":{"ask":["*"]}}`; got != want {
		t.Errorf("claude settings:\n got %s\nwant %s", got, want)
	}
	toml := gemini.AskAllTOML
	for _, want := range []string{"toolName = \"*\"\ndecision = \"ask_user\"", "toolName = \"run_shell_command\"\nargsPattern = \"[\\\\s\\\\S]*\"\ndecision = \"ask_user\""} {
		if !strings.Contains(toml, want) {
			t.Errorf("gemini's policy lacks %q:\n%s", want, toml)
		}
	}
	if strings.Contains(toml, `"allow"`) {
		t.Errorf("gemini's policy allows something:\n%s", toml)
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
