package cli

import (
	"context"
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

func NewCmdSkill(f *Factory) *cobra.Command {
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
	cmd.AddCommand(NewCmdSkillList(f, nil), NewCmdSkillLoad(f, nil))
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

// SkillListOptions is what `skill list` runs with.
type SkillListOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	JSON bool
}

func NewCmdSkillList(f *Factory, runF func(context.Context, *SkillListOptions) error) *cobra.Command {
	o := &SkillListOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the skills, workspace first, and any that fail to load",
		Example: `  agentinfra skill list
  agentinfra skill list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return skillListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {skills: [...], problems: [...]}")
	return cmd
}

func skillListRun(ctx context.Context, o *SkillListOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	lib := skills.NewLibrary(ws, o.Getenv)
	list, problems, err := lib.List(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		out := struct {
			Skills   []skillListJSON    `json:"skills"`
			Problems []skillProblemJSON `json:"problems"`
		}{Skills: []skillListJSON{}, Problems: skillsProblemsJSON(ws, problems)}
		for _, s := range list {
			out.Skills = append(out.Skills, skillListJSON{Slug: s.Slug, Name: s.Name, Description: s.Description,
				Source: s.Source, Path: s.DisplayDir + "/SKILL.md", Resources: s.Resources})
		}
		return jsonout.Write(o.IO.Out, out)
	}
	if len(list) == 0 && len(problems) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "no skills in %s; create .agent/skills/SLUG/SKILL.md\n", strings.Join(lib.Dirs(), " or "))
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Slug, s.Source, mdtext.Shorten(s.Description, 90))
	}
	tw.Flush()
	skillsPrintProblems(o.IO, problems)
	return nil
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

// SkillLoadOptions is what `skill load` runs with.
type SkillLoadOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	Slugs  []string
	Format string
	JSON   bool
}

func NewCmdSkillLoad(f *Factory, runF func(context.Context, *SkillLoadOptions) error) *cobra.Command {
	o := &SkillLoadOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
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
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeSkills(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Slugs = args
			fm, err := skills.ValidFormat(o.Format)
			if err != nil {
				return UsageErrorf("--format: %v", err)
			}
			o.Format = fm
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return skillLoadRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", skills.FormatFull, "full, summary or instructions_only")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {skills: [{slug, name, format, text, bytes, meta, ...}]}")
	RegisterFlagCompletion(cmd, "format", cobra.FixedCompletions(skillFormats, NoFiles))
	return cmd
}

func skillLoadRun(ctx context.Context, o *SkillLoadOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	lib := skills.NewLibrary(ws, o.Getenv)
	var texts []string
	var out []skillLoadJSON
	for _, slug := range o.Slugs {
		s, err := lib.Load(ctx, slug)
		if err != nil {
			return err
		}
		text, err := skills.Render(s, o.Format)
		if err != nil {
			return err
		}
		texts = append(texts, text)
		out = append(out, skillLoadJSON{Slug: s.Slug, Name: s.Name, Description: s.Description, Source: s.Source,
			Path: s.DisplayDir + "/SKILL.md", Meta: s.Meta, Resources: s.Resources, Format: o.Format, Text: text, Bytes: len(text)})
	}
	if o.JSON {
		return jsonout.Write(o.IO.Out, struct {
			Skills []skillLoadJSON `json:"skills"`
		}{out})
	}
	_, err = io.WriteString(o.IO.Out, strings.Join(texts, "\n"))
	return err
}

func skillsProblemsJSON(ws *workspace.Workspace, problems []skills.Problem) []skillProblemJSON {
	out := []skillProblemJSON{}
	for _, p := range problems {
		out = append(out, skillProblemJSON{Name: p.Slug, Path: ws.RelPath(p.Path), Line: p.Line, Message: p.Error()})
	}
	return out
}

func skillsPrintProblems(ios *IOStreams, problems []skills.Problem) {
	for _, p := range problems {
		fmt.Fprintf(ios.ErrOut, "warning: %v\n", p.Err)
	}
}
