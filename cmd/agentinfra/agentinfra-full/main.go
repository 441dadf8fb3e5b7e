// Command agentinfra-full runs every agentinfra command, those that link the
// supervision database, the MCP SDK, Slack and the web console included.
// agentinfra hands these commands over to it: install both (go install
// ./cmd/...), side by side or on PATH.
package main

import (
	"os"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/full"
)

func main() { os.Exit(cli.Main(full.Commands)) }
