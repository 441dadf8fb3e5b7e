package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/workspace"
)

func NewCmdTask(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Create, update, claim, list, show and archive tasks in the matrix",
		Long: `task works on the rows of .agent/DEVELOPMENT_MATRIX.md and the task folders
.agent/tasks/{id}_{slug}/. Every change takes the matrix lock and rewrites only the
row it changes; everything else in the file keeps its bytes.

Exit codes: 0 success, 1 failure, 2 usage error (unknown flag or refused value).`,
		Example: `  agentinfra task create --description "Add retry to fetcher" --mode coder --skills go-testing
  agentinfra task list --status TODO,IN_PROGRESS --sort priority
  agentinfra task update 3f9a2c --status IN_PROGRESS --agent @coder
  agentinfra task claim 3f9a2c --agent @coder
  agentinfra task show 3f9a2c
  agentinfra task scaffold 3f9a2c
  agentinfra task archive --all-done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		NewCmdTaskCreate(f, nil),
		NewCmdTaskUpdate(f, nil),
		NewCmdTaskClaim(f, nil),
		NewCmdTaskList(f, nil),
		NewCmdTaskShow(f, nil),
		NewCmdTaskContext(f, nil),
		NewCmdTaskScaffold(f, nil),
		NewCmdTaskArchive(f, nil),
	)
	return cmd
}

// PrintWarnings puts the service's warnings on stderr; they do not change the exit code.
func PrintWarnings(ios *IOStreams, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(ios.ErrOut, "warning:", termsafe.Text(w))
	}
}

func WriteJSON(w io.Writer, v any) error { return jsonout.Write(w, v) }

func rel(ws *workspace.Workspace, p string) string {
	if p == "" {
		return ""
	}
	return ws.RelPath(p)
}

// useColor: only on a terminal, and never with NO_COLOR set (https://no-color.org).
func useColor(ios *IOStreams, getenv func(string) string) bool {
	return ios.IsTTY && (getenv == nil || getenv("NO_COLOR") == "")
}

var statusColors = map[string]string{
	"TODO": "33", "IN_PROGRESS": "36", "BLOCKED": "31", "REVIEW": "35", "DONE": "32",
}

func colorize(on bool, code, s string) string {
	if !on || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// splitCSV splits "a,b" lists given to flags.
func splitCSV(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
