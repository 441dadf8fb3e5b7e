package dispatch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// writeField writes one "- Key: value" line, the value on one line ("-" when empty).
func writeField(b *strings.Builder, k, v string) {
	v = strings.Join(strings.Fields(v), " ")
	if v == "" {
		v = "-"
	}
	fmt.Fprintf(b, "- %s: %s\n", k, v)
}

// writeTaskFields writes a task row as field lines, extra columns last and
// sorted: the same rendering in the prompt and in the task context. withID
// adds ID and Description, which the context shows in its title instead.
func writeTaskFields(b *strings.Builder, t matrix.Task, withID bool) {
	if withID {
		writeField(b, "ID", t.ID)
	}
	writeField(b, "Status", t.Status)
	writeField(b, "Priority", t.Priority)
	writeField(b, "Difficulty", t.Difficulty)
	writeField(b, "Mode", t.Mode)
	writeField(b, "Skills", strings.Join(t.Skills, ", "))
	writeField(b, "Agents", strings.Join(t.Agents, ", "))
	if withID {
		writeField(b, "Description", t.Description)
	}
	writeField(b, "Created", t.Created)
	writeField(b, "Updated", t.Updated)
	extra := make([]string, 0, len(t.Extra))
	for k := range t.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		writeField(b, k, t.Extra[k])
	}
}
