// Command agentinfra manages a repository's .agent/ directory: the task matrix,
// task folders, skills, agent modes, prompts, dispatch, and the MCP server.
package main

import (
	"os"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

func main() { os.Exit(cli.Main()) }
