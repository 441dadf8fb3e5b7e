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
		mdtext.Field(b, "Description", DescriptionLine(t))
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

// DescriptionLine is the Description for a title or a field line: the text
// itself when it is one line, else its first line and a pointer to the
// section WriteDescription writes.
func DescriptionLine(t matrix.Task) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(t.Description), "\n")
	if !multi || strings.TrimSpace(rest) == "" {
		return first
	}
	return strings.TrimSpace(first) + " (continued under Description below)"
}

// WriteDescription writes a Description that goes on over several lines
// as a section of its own, its lines as written (a list stays a list, a
// code block a code block): an agent must get the code it is asked about
// as it is, not squeezed onto one line. A one-line Description is in the
// field lines already: nothing is written.
func WriteDescription(b *strings.Builder, t matrix.Task) {
	d := mdtext.TrimBlankLines(t.Description)
	if !strings.Contains(d, "\n") {
		return
	}
	b.WriteString("\n## Description\n\n")
	b.WriteString(d)
	b.WriteString("\n")
}
