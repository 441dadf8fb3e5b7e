package taskcontext

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/prompt"
)

// Render renders c as Markdown for people and agents. Same input, same bytes.
func Render(c Context) string {
	var b strings.Builder
	t := c.Task
	fmt.Fprintf(&b, "# Task %s: %s\n\n", t.ID, mdtext.OneLine(prompt.DescriptionLine(t)))
	prompt.WriteTaskFields(&b, t, false)
	switch {
	case c.TaskDir == "":
		mdtext.Field(&b, "Task folder", "none yet")
	case c.Archived:
		mdtext.Field(&b, "Task folder", c.TaskDir+" (archived)")
	default:
		mdtext.Field(&b, "Task folder", c.TaskDir)
	}
	switch {
	case c.Mode.Name == "":
		mdtext.Field(&b, "Mode file", "none (the task has no mode)")
	case c.Mode.Exists && c.Mode.Error == "":
		mdtext.Field(&b, "Mode file", c.Mode.Path)
	case c.Mode.Exists:
		mdtext.Field(&b, "Mode file", c.Mode.Path+" (cannot be loaded: "+c.Mode.Error+")")
	default:
		mdtext.Field(&b, "Mode file", "missing: "+c.Mode.Error)
	}
	prompt.WriteDescription(&b, t)

	b.WriteString("\n## README\n\n")
	switch {
	case c.TaskDir == "":
		b.WriteString("There is no task folder, so there is no README.\n")
	case !c.Readme.Exists:
		fmt.Fprintf(&b, "There is no %s.\n", c.Readme.Path)
	default:
		fmt.Fprintf(&b, "From %s", c.Readme.Path)
		if c.Readme.Truncated {
			fmt.Fprintf(&b, " (truncated: the first %d of %d bytes)", len(c.Readme.Content), c.Readme.Bytes)
		}
		b.WriteString(":\n\n")
		b.WriteString(mdtext.Fence(c.Readme.Content, "markdown"))
	}

	b.WriteString("\n## Links in the README\n\n")
	if len(c.Links) == 0 {
		b.WriteString("None.\n")
	}
	for _, l := range c.Links {
		txt := l.Text
		if txt == "" {
			txt = l.Target
		}
		switch l.Status {
		case LinkOK:
			kind := "file"
			if l.IsDir {
				kind = "folder"
			}
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (%s)\n", l.Line, txt, l.Path, kind)
		case LinkMissing:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (MISSING: no such file in the workspace)\n", l.Line, txt, l.Path)
		case LinkOutside:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (OUTSIDE the workspace; not followed)\n", l.Line, txt, l.Target)
		case LinkExternal:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (external)\n", l.Line, txt, l.Target)
		}
	}

	tr := c.Tracking
	b.WriteString("\n## Tracking\n\n")
	switch {
	case c.TaskDir == "" || tr.Dir == "":
		b.WriteString("No tracking/ folder.\n")
	case tr.Error != "":
		fmt.Fprintf(&b, "%s: %s.\n", tr.Dir, tr.Error)
	case tr.Total == 0:
		fmt.Fprintf(&b, "%s is empty.\n", tr.Dir)
	default:
		fmt.Fprintf(&b, "The last %d of %d files in %s by name, oldest first; each entry shows at most its last %d bytes.\n",
			len(tr.Entries), tr.Total, tr.Dir, tr.MaxEntryBytes)
		for _, e := range tr.Entries {
			fmt.Fprintf(&b, "\n### %s\n\n", e.Path)
			switch {
			case e.Binary:
				fmt.Fprintf(&b, "(binary file, %d bytes; not shown)\n", e.Bytes)
			case e.Truncated:
				fmt.Fprintf(&b, "(truncated: the last %d of %d bytes)\n\n", len(e.Content), e.Bytes)
				b.WriteString(mdtext.Fence(e.Content, "markdown"))
			default:
				b.WriteString(mdtext.Fence(e.Content, "markdown"))
			}
		}
	}

	b.WriteString("\n## Artifacts\n\n")
	if len(c.Artifacts) == 0 {
		b.WriteString("None.\n")
	}
	for _, a := range c.Artifacts {
		fmt.Fprintf(&b, "- %s (%d bytes)\n", a.Path, a.Bytes)
	}
	if c.ArtifactsTotal > len(c.Artifacts) {
		fmt.Fprintf(&b, "- ... and %d more (showing %d of %d)\n", c.ArtifactsTotal-len(c.Artifacts), len(c.Artifacts), c.ArtifactsTotal)
	}

	b.WriteString("\n## Skills\n\n")
	if len(c.Skills) == 0 {
		b.WriteString("None.\n")
	}
	for _, s := range c.Skills {
		if !s.Found {
			fmt.Fprintf(&b, "- %s (named by the %s): MISSING: %s\n", s.Slug, s.From, s.Error)
			continue
		}
		fmt.Fprintf(&b, "- %s (named by the %s): %s skill, %s\n", s.Slug, s.From, s.Source, s.Path)
	}
	// The summaries, each a "## Skill: ..." section of its own.
	for _, s := range c.Skills {
		if s.Found {
			fmt.Fprintf(&b, "\n%s", s.Summary)
		}
	}
	return b.String()
}
