package mcpserver

import (
	"errors"

	"github.com/agentinfra/agentinfra/matrix"
)

// mcpMigrateAdvice is the CLI's "run agentinfra migrate" for a client that
// cannot run commands: the conversion is a human's decision, not a tool's.
const mcpMigrateAdvice = "ask the user to run `agentinfra migrate --dry-run` in the workspace to review the conversion, then `agentinfra migrate` (no MCP tool converts the file)"

// adaptedError keeps the typed error under a message written for MCP clients.
type adaptedError struct {
	msg string
	err error
}

func (e *adaptedError) Error() string { return e.msg }
func (e *adaptedError) Unwrap() error { return e.err }

// noTaskTable rewrites a *matrix.NoTaskTableError for an MCP client; any
// other error (or nil) is returned as it is.
func noTaskTable(err error) error {
	var nt *matrix.NoTaskTableError
	if !errors.As(err, &nt) {
		return err
	}
	return &adaptedError{msg: nt.Explain(mcpMigrateAdvice), err: err}
}
