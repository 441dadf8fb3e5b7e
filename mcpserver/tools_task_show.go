package mcpserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/task"
)

// taskShow is the task tool's action show: the row, its folder and README,
// as `agentinfra task show --json` gives them.
func (s *Server) taskShow(ctx context.Context, in TaskInput, out TaskOutput) (TaskOutput, string, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return out, "", fieldErrorf("id", "required for action show; pass the task ID (action list shows them)")
	}
	info, err := task.ShowTask(ctx, s.ws, id)
	if err != nil {
		return out, "", idError(err)
	}
	t := info.Task
	out.Task, out.Holder = &t, info.Holder
	if info.Dir != "" {
		out.Dir, out.Archived, out.Readme = s.rel(info.Dir), info.Archived, info.Readme
	}
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	line("ID", t.ID)
	line("Status", t.Status)
	line("Priority", t.Priority)
	line("Difficulty", t.Difficulty)
	line("Mode", t.Mode)
	line("Skills", strings.Join(t.Skills, ", "))
	if len(t.Agents) == 0 && info.Holder != "" {
		line("Agents", info.Holder+" (holder, from the task README's status log: the matrix has no Agents column)")
	} else {
		line("Agents", strings.Join(t.Agents, " "))
	}
	line("Description", t.Description)
	line("Created", t.Created)
	line("Updated", t.Updated)
	extra := make([]string, 0, len(t.Extra))
	for k := range t.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		line(k, t.Extra[k])
	}
	switch {
	case out.Dir == "":
		line("Folder", "(none)")
	case out.Archived:
		line("Folder", out.Dir+" (archived)")
	default:
		line("Folder", out.Dir)
	}
	if out.Readme != "" {
		fmt.Fprintf(&b, "\n%s", out.Readme)
	}
	return out, b.String(), nil
}
