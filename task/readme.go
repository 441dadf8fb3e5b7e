package task

import (
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// RenderReadme fills a task template, with {{date}} the day the folder is made.
// Placeholders, in the brace form of the built-in template and the bracket
// form people write in their own (any case: [ID], [id], [Task Name]):
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
func RenderReadme(tmpl string, t matrix.Task, slug, date string) string {
	return renderReadme(tmpl, t, slug, date)
}

func renderReadme(tmpl string, t matrix.Task, slug, date string) string {
	orDash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	title := taskTitle(t.Description)
	// A heading is one line: a Description over several lines puts its
	// first line there, and the whole text where the template says more.
	tmpl = headingsUseTitle(tmpl)
	braces := strings.NewReplacer(
		"{{id}}", t.ID,
		"{{title}}", title, "{{name}}", title,
		"{{description}}", t.Description,
		"{{status}}", t.Status,
		"{{mode}}", orDash(t.Mode),
		"{{skills}}", orDash(strings.Join(t.Skills, ", ")),
		"{{agents}}", orDash(strings.Join(t.Agents, " ")),
		"{{priority}}", t.Priority,
		"{{difficulty}}", t.Difficulty,
		"{{created}}", t.Created,
		"{{updated}}", t.Updated,
		"{{date}}", date,
		"{{slug}}", slug,
	).Replace(tmpl)
	// People write the bracket form in any case ([ID], [Task Name], [date]).
	return fillBrackets(braces, map[string]string{
		"id": t.ID, "task id": t.ID,
		"task name": title, "title": title,
		"description": t.Description,
		"status":      t.Status, "priority": t.Priority, "difficulty": t.Difficulty,
		"mode": orDash(t.Mode), "date": date,
	})
}

// fillBrackets replaces each "[name]" whose lower-cased name is a key of
// values; other brackets ("[ ]", "[x]", links) stay as written.
func fillBrackets(s string, values map[string]string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '[')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open:], ']')
		if end < 0 {
			break
		}
		end += open
		if v, ok := values[strings.ToLower(s[open+1:end])]; ok {
			b.WriteString(s[:open])
			b.WriteString(v)
			s = s[end+1:]
			continue
		}
		b.WriteString(s[:open+1])
		s = s[open+1:]
	}
	b.WriteString(s)
	return b.String()
}

// taskTitle is the description's first line: cells continue over "<br>", and
// rows read from a continued record over newlines.
// headingsUseTitle writes {{description}} and [description] on a template's
// heading lines as {{title}}.
func headingsUseTitle(tmpl string) string {
	if !strings.Contains(tmpl, "{{description}}") && !strings.Contains(strings.ToLower(tmpl), "[description]") {
		return tmpl
	}
	lines := strings.SplitAfter(tmpl, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "#") {
			l = strings.ReplaceAll(l, "{{description}}", "{{title}}")
			if j := strings.Index(strings.ToLower(l), "[description]"); j >= 0 {
				l = l[:j] + "{{title}}" + l[j+len("[description]"):]
			}
			lines[i] = l
		}
	}
	return strings.Join(lines, "")
}

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
