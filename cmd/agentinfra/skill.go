package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

func newCmdSkill(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "List and load skills (.agent/skills/{slug}/SKILL.md, then the global skills folder)",
		Long: `Skills are folders holding a SKILL.md (YAML front matter with name and
description, then Markdown instructions) and optional resource files. They are
looked up in .agent/skills/ first, then in $AGENTINFRA_GLOBAL_SKILLS (default
~/.agent/global_skills/); a workspace skill shadows a global one.`,
		Example: `  agentinfra skill list
  agentinfra skill load go-testing --format instructions_only`,
	}
	cmd.AddCommand(newCmdSkillList(f), newCmdSkillLoad(f))
	return cmd
}

type skillListJSON struct {
	Slug        string   `json:"slug"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Source      string   `json:"source"`
	Path        string   `json:"path"`
	Resources   []string `json:"resources"`
}

type skillProblemJSON struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func newCmdSkillList(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the skills, workspace first, and any that fail to load",
		Example: `  agentinfra skill list
  agentinfra skill list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			lib := skills.NewLibrary(ws, f.Getenv)
			list, problems, err := lib.List(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				out := struct {
					Skills   []skillListJSON    `json:"skills"`
					Problems []skillProblemJSON `json:"problems"`
				}{Skills: []skillListJSON{}, Problems: skillsProblemsJSON(ws, problems)}
				for _, s := range list {
					out.Skills = append(out.Skills, skillListJSON{Slug: s.Slug, Name: s.Name, Description: s.Description,
						Source: s.Source, Path: s.DisplayDir + "/SKILL.md", Resources: s.Resources})
				}
				return jsonout.Write(f.IO.Out, out)
			}
			if len(list) == 0 && len(problems) == 0 {
				fmt.Fprintf(f.IO.ErrOut, "no skills in %s; create .agent/skills/SLUG/SKILL.md\n", strings.Join(lib.Dirs(), " or "))
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Slug, s.Source, mdtext.Shorten(s.Description, 90))
			}
			tw.Flush()
			skillsPrintProblems(f, ws, problems)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {skills: [...], problems: [...]}")
	return cmd
}

type skillLoadJSON struct {
	Slug        string         `json:"slug"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Source      string         `json:"source"`
	Path        string         `json:"path"`
	Meta        map[string]any `json:"meta"`
	Resources   []string       `json:"resources"`
	Format      string         `json:"format"`
	Text        string         `json:"text"`
	Bytes       int            `json:"bytes"`
}

func newCmdSkillLoad(f *Factory) *cobra.Command {
	var asJSON bool
	var format string
	cmd := &cobra.Command{
		Use:   "load SLUG...",
		Short: "Print skills in a format: full, summary or instructions_only",
		Long: `Print one or more skills.

Formats:
  full               front-matter fields, the whole body, the resource files
  summary            name, description and the outline of headings (at most 1,500 characters)
  instructions_only  the body without sections headed Example(s), Reference(s) or Resources`,
		Example: `  agentinfra skill load go-testing
  agentinfra skill load go-testing code-review --format summary --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := skills.ValidFormat(format)
			if err != nil {
				return usageErrorf("--format: %v", err)
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			lib := skills.NewLibrary(ws, f.Getenv)
			var texts []string
			var out []skillLoadJSON
			for _, slug := range args {
				s, err := lib.Load(cmd.Context(), slug)
				if err != nil {
					return err
				}
				text, err := skills.Render(s, fm)
				if err != nil {
					return err
				}
				texts = append(texts, text)
				out = append(out, skillLoadJSON{Slug: s.Slug, Name: s.Name, Description: s.Description, Source: s.Source,
					Path: s.DisplayDir + "/SKILL.md", Meta: s.Meta, Resources: s.Resources, Format: fm, Text: text, Bytes: len(text)})
			}
			if asJSON {
				return jsonout.Write(f.IO.Out, struct {
					Skills []skillLoadJSON `json:"skills"`
				}{out})
			}
			_, err = io.WriteString(f.IO.Out, strings.Join(texts, "\n"))
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", skills.FormatFull, "full, summary or instructions_only")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {skills: [{slug, name, format, text, bytes, meta, ...}]}")
	return cmd
}

func skillsProblemsJSON(ws *workspace.Workspace, problems []skills.Problem) []skillProblemJSON {
	out := []skillProblemJSON{}
	for _, p := range problems {
		out = append(out, skillProblemJSON{Name: p.Slug, Path: ws.RelPath(p.Path), Line: p.Line, Message: p.Error()})
	}
	return out
}

func skillsPrintProblems(f *Factory, ws *workspace.Workspace, problems []skills.Problem) {
	for _, p := range problems {
		fmt.Fprintf(f.IO.ErrOut, "warning: %v\n", p.Err)
	}
}
