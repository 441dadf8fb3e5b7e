package task

import (
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// RenderReadme fills a task template, with {{date}} the task's Created date.
// Placeholders, in the brace form of the built-in template and the bracket
// form people write in their own:
//
//	{{id}} [ID] [Task ID]            the task ID
//	{{title}} {{name}} [Task Name] [Title]
//	                                 the first line of the description
//	{{description}} [Description]    the whole description
//	{{status}} [Status]              {{priority}} [Priority]
//	{{difficulty}}                   {{mode}} [Mode]
//	{{skills}} {{agents}}            {{created}} {{updated}} {{slug}}
//	{{date}} [Date]                  the day the folder is made
//
// Anything else is left as written.
func RenderReadme(tmpl string, t matrix.Task, slug string) string {
	return renderReadme(tmpl, t, slug, t.Created)
}

func renderReadme(tmpl string, t matrix.Task, slug, date string) string {
	orDash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	title := taskTitle(t.Description)
	return strings.NewReplacer(
		"{{id}}", t.ID, "[ID]", t.ID, "[Task ID]", t.ID,
		"{{title}}", title, "{{name}}", title, "[Task Name]", title, "[Title]", title,
		"{{description}}", t.Description, "[Description]", t.Description,
		"{{status}}", t.Status, "[Status]", t.Status,
		"{{mode}}", orDash(t.Mode), "[Mode]", orDash(t.Mode),
		"{{skills}}", orDash(strings.Join(t.Skills, ", ")),
		"{{agents}}", orDash(strings.Join(t.Agents, " ")),
		"{{priority}}", t.Priority, "[Priority]", t.Priority,
		"{{difficulty}}", t.Difficulty,
		"{{created}}", t.Created,
		"{{updated}}", t.Updated,
		"{{date}}", date, "[Date]", date,
		"{{slug}}", slug,
	).Replace(tmpl)
}

// taskTitle is the description's first line: cells continue over "<br>", and
// rows read from a continued record over newlines.
func taskTitle(desc string) string {
	first := desc
	for _, sep := range []string{"<br>", "<br/>", "<br />", "\n"} {
		first, _, _ = strings.Cut(first, sep)
	}
	if first = strings.TrimSpace(first); first == "" {
		return strings.TrimSpace(desc)
	}
	return first
}
