package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvTools names the folder holding the npm-installed agent CLIs
// ($AGENTINFRA_TOOLS/node_modules/.bin/NAME).
const EnvTools = "AGENTINFRA_TOOLS"

// LookupCLI finds an agent CLI executable: $AGENTINFRA_TOOLS/node_modules/.bin/NAME
// when that variable is set, else NAME on $PATH.
func LookupCLI(name string) (string, error) { return LookupCLIEnv(name, os.Getenv) }

// LookupCLIEnv is LookupCLI reading $AGENTINFRA_TOOLS through getenv.
func LookupCLIEnv(name string, getenv func(string) string) (string, error) {
	if dir := getenv(EnvTools); dir != "" {
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s not found in $%s (%s): run scripts/install-tools.sh: %w", name, EnvTools, dir, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not on $PATH: install it (npm install -g %s) or set $%s to a folder holding node_modules/.bin/%s: %w",
			name, npmPackage(name), EnvTools, name, err)
	}
	return p, nil
}

func npmPackage(cli string) string {
	switch cli {
	case CLIGemini:
		return "@google/gemini-cli"
	case CLIClaude:
		return "@anthropic-ai/claude-code"
	case CLICodex:
		return "@openai/codex"
	}
	return cli
}
