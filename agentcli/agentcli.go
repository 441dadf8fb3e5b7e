// Package agentcli is the registry of the agent CLIs agentinfra runs:
// gemini, claude and codex, each in a package of its own that holds what
// agentinfra knows of it — its headless command line and output parser (a
// runner.Runner), its permission bridge (a bridge.Starter: the CLI's own
// permission protocol over its stdin and stdout) and the native rules the
// workspace policy becomes for it. Callers pick a CLI by name here. What
// the CLIs share is in package runner (a headless process: start, capture,
// kill, redact) and package bridge (a supervised one: the gate every
// permission request goes through, the session it follows).
package agentcli

import (
	"context"
	"strings"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/codex"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
)

// CLI is one agent CLI.
type CLI struct {
	// Name is how agentinfra names it (runner.CLIs).
	Name string
	// Runner builds its headless command line and parses what it prints.
	Runner runner.Runner
	// Bridge starts it under supervision.
	Bridge bridge.Starter
	// CheckPrompt refuses a prompt the CLI cannot take (nil: its size is
	// never a problem).
	CheckPrompt func(prompt string) error
}

// clis are the agent CLIs by name; runner.CLIs lists the same names, the
// default first.
var clis = map[string]CLI{
	runner.CLIGemini: {Name: runner.CLIGemini, Runner: gemini.Runner{}, Bridge: gemini.StartBridge, CheckPrompt: gemini.CheckPromptSize},
	runner.CLIClaude: {Name: runner.CLIClaude, Runner: claude.Runner{}, Bridge: claude.StartBridge},
	runner.CLICodex:  {Name: runner.CLICodex, Runner: codex.Runner{}, Bridge: codex.StartBridge},
}

// For returns the CLI of a name, in any case ("" = the default, gemini).
// An unknown name is an invalid input on "cli".
func For(name string) (CLI, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		name = runner.CLIs[0]
	}
	c, ok := clis[name]
	if !ok {
		return CLI{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "cli", Value: name, Valid: runner.CLIs, Reason: "unknown agent CLI"}
	}
	return c, nil
}

// Runner returns the headless runner of a CLI name ("" = gemini).
func Runner(name string) (runner.Runner, error) {
	c, err := For(name)
	return c.Runner, err
}

// CheckPrompt refuses a prompt that the CLI name cannot take (only gemini
// has such a limit; an unknown CLI is refused where it is chosen).
func CheckPrompt(name, prompt string) error {
	c, err := For(name)
	if err != nil || c.CheckPrompt == nil {
		return nil
	}
	return c.CheckPrompt(prompt)
}

// StartSupervised starts req.CLI under supervision through its bridge
// (bridge.Start with the CLI's starter).
func StartSupervised(ctx context.Context, req bridge.Request, opts bridge.Options) (bridge.Bridge, error) {
	c, err := For(req.CLI)
	if err != nil {
		return nil, err
	}
	return bridge.Start(ctx, c.Bridge, req, opts)
}

// RunSupervised is one supervised turn of req.CLI (bridge.Run with the
// CLI's starter).
func RunSupervised(ctx context.Context, req bridge.Request, opts bridge.Options) (runner.Result, error) {
	c, err := For(req.CLI)
	if err != nil {
		return runner.Result{CLI: req.CLI, Model: req.Model, ExitCode: -1, Error: err.Error()}, err
	}
	return bridge.Run(ctx, c.Bridge, req, opts)
}
