package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Validation is the task tool's validate result, in the shape of
// `agentinfra validate --format json`.
type Validation struct {
	// File is the matrix, relative to the workspace root.
	File        string              `json:"file"`
	Tasks       int                 `json:"tasks"`
	Errors      int                 `json:"errors"`
	Warnings    int                 `json:"warnings"`
	Diagnostics []matrix.Diagnostic `json:"diagnostics"`
}

// taskValidate is the task tool's action validate: the matrix's own problems
// and the workspace's (modes, skills and task folders rows name), as
// `agentinfra validate` reports them. Problems are the result, not a tool
// error: the call succeeds whatever it finds.
func (s *Server) taskValidate(ctx context.Context, out TaskOutput) (TaskOutput, string, error) {
	d, err := s.doc(ctx)
	if err != nil {
		return out, "", err
	}
	v := &Validation{File: s.rel(s.ws.MatrixPath()), Tasks: d.NumTasks(), Diagnostics: []matrix.Diagnostic{}}
	v.Diagnostics = append(v.Diagnostics, task.Validate(s.ws, d, v.File, s.opts.Getenv)...)
	var b strings.Builder
	for _, dg := range v.Diagnostics {
		if dg.Severity == matrix.SeverityError {
			v.Errors++
		} else {
			v.Warnings++
		}
		fmt.Fprintln(&b, dg.String())
	}
	fmt.Fprintf(&b, "%s: %d tasks, %d errors, %d warnings\n", v.File, v.Tasks, v.Errors, v.Warnings)
	out.Validation = v
	return out, b.String(), nil
}
