package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// TaskShowOptions is what `task show` runs with.
type TaskShowOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	ID   string
	JSON bool
}

func NewCmdTaskShow(f *Factory, runF func(context.Context, *TaskShowOptions) error) *cobra.Command {
	o := &TaskShowOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a task's row, its folder and its README",
		Example: `  agentinfra task show 3f9a2c
  agentinfra task show 3f9a2c --json | jq -r .readme`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskShowRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {task, dir, archived, readme, holder} as JSON")
	return cmd
}

func taskShowRun(ctx context.Context, o *TaskShowOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	info, err := task.ShowTask(ctx, ws, o.ID)
	if err != nil {
		return err
	}
	t, dir, archived, readme := info.Task, info.Dir, info.Archived, info.Readme
	var wait *waiting.Item
	if m, ok := waiting.ByTask(ws.Root)[t.ID]; ok {
		wait = &m.Item
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, struct {
			Task     matrix.Task   `json:"task"`
			Dir      string        `json:"dir"`
			Archived bool          `json:"archived"`
			Readme   string        `json:"readme"`
			Holder   string        `json:"holder,omitempty"`
			Waiting  *waiting.Item `json:"waiting,omitempty"`
		}{t, rel(ws, dir), archived, readme, info.Holder, wait})
	}
	w := o.IO.Out
	fields := [][2]string{
		{"ID", t.ID}, {"Status", t.Status}, {"Priority", t.Priority}, {"Difficulty", t.Difficulty},
		{"Mode", t.Mode}, {"Skills", strings.Join(t.Skills, ", ")}, {"Agents", agentsShown(t, info.Holder)},
		{"Description", t.Description}, {"Created", t.Created}, {"Updated", t.Updated},
	}
	var extra []string
	for k := range t.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		fields = append(fields, [2]string{k, t.Extra[k]})
	}
	folder := "(none)"
	switch {
	case dir != "" && archived:
		folder = rel(ws, dir) + " (archived)"
	case dir != "":
		folder = rel(ws, dir)
	}
	fields = append(fields, [2]string{"Folder", folder})
	if wait != nil {
		// The title is the agent's: shown inert.
		fields = append(fields, [2]string{"Waiting", fmt.Sprintf("%s (%s): %s", wait.Summary(time.Now()), termsafe.Line(strings.Join(strings.Fields(wait.What), " ")), wait.HowToAnswer())})
	}
	wd := 0
	for _, kv := range fields {
		wd = max(wd, len(kv[0]))
	}
	for _, kv := range fields {
		// A value that goes on over several lines (a Description with a
		// list or a code block) keeps its lines, under the first one.
		lines := strings.Split(kv[1], "\n")
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "" {
				lines[i] = strings.Repeat(" ", wd+3) + lines[i]
			}
		}
		fmt.Fprintf(w, "%-*s  %s\n", wd+1, kv[0]+":", strings.Join(lines, "\n"))
	}
	if readme != "" {
		fmt.Fprintf(w, "\n%s\n", colorize(useColor(o.IO, o.Getenv), "1", "── "+rel(ws, filepath.Join(dir, "README.md"))+" ──"))
		fmt.Fprint(w, readme)
		if !strings.HasSuffix(readme, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// agentsShown is the Agents line: the row's @mentions, or on a matrix
// without an Agents column the holder its README records.
func agentsShown(t matrix.Task, holder string) string {
	if len(t.Agents) == 0 && holder != "" {
		return holder + " (holder, from the task README's status log: the matrix has no Agents column)"
	}
	return strings.Join(t.Agents, " ")
}
