// Command agentinfra manages a repository's .agent/ directory: the task matrix,
// task folders, skills, agent modes, prompts, dispatch, and the MCP server.
//
// This binary links what the light commands need (task, validate, prompt,
// skill, mode, model, init, hook, migrate...); the commands that reach the
// supervision database, the MCP SDK, Slack or the web console are listed
// here and run by agentinfra-full (./agentinfra-full), which this one
// replaces itself with (execve). See internal/cli's full_binary.go.
package main

import (
	"os"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

func main() { os.Exit(cli.Main(nil)) }
