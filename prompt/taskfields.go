package prompt

import (
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
)

// WriteTaskFields writes a task row as field lines, extra columns last and
// sorted: the same rendering in the prompt and in the task context. withID
// adds ID and Description, which the context shows in its title instead.
func WriteTaskFields(b *strings.Builder, t matrix.Task, withID bool) {
	if withID {
		mdtext.Field(b, "ID", t.ID)
	}
	mdtext.Field(b, "Status", t.Status)
	mdtext.Field(b, "Priority", t.Priority)
	mdtext.Field(b, "Difficulty", t.Difficulty)
	mdtext.Field(b, "Mode", t.Mode)
	mdtext.Field(b, "Skills", strings.Join(t.Skills, ", "))
	mdtext.Field(b, "Agents", strings.Join(t.Agents, ", "))
	if withID {
		mdtext.Field(b, "Description", t.Description)
	}
	mdtext.Field(b, "Created", t.Created)
	mdtext.Field(b, "Updated", t.Updated)
	extra := make([]string, 0, len(t.Extra))
	for k := range t.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		mdtext.Field(b, k, t.Extra[k])
	}
}
