package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

func NewCmdMode(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mode",
		Short: "Agent modes: the system prompts in .agent/agents/{mode}.md",
		Long: `An agent mode is .agent/agents/{mode}.md: the system prompt of an agent, with
optional YAML front matter:

  ---
  description: Writes code and tests
  model: fast            # the mode's tier at difficulty med (fast|deep), or a model name for every difficulty
  skills: [go-testing]   # skills always included in this mode's prompts
  ---`,
		Example: `  agentinfra mode list
  agentinfra mode list --json`,
	}
	cmd.AddCommand(NewCmdModeList(f, nil))
	return cmd
}

type modeJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Model       string   `json:"model"`
	Skills      []string `json:"skills"`
	Path        string   `json:"path"`
}

// ModeListOptions is what `mode list` runs with.
type ModeListOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)

	JSON bool
}

func NewCmdModeList(f *Factory, runF func(context.Context, *ModeListOptions) error) *cobra.Command {
	o := &ModeListOptions{IO: f.IO, Workspace: f.Workspace}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agent modes with their model and skills",
		Example: `  agentinfra mode list
  agentinfra mode list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return modeListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {modes: [{name, description, model, skills, path}], problems: [...]}")
	return cmd
}

func modeListRun(ctx context.Context, o *ModeListOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	modes, problems, err := skills.ListModes(ctx, ws)
	if err != nil {
		return err
	}
	if o.JSON {
		out := struct {
			Modes    []modeJSON         `json:"modes"`
			Problems []skillProblemJSON `json:"problems"`
		}{Modes: []modeJSON{}, Problems: skillsProblemsJSON(ws, problems)}
		for _, m := range modes {
			out.Modes = append(out.Modes, modeJSON{Name: m.Name, Description: m.Description, Model: m.Model,
				Skills: m.Skills, Path: ws.RelPath(m.Path)})
		}
		return jsonout.Write(o.IO.Out, out)
	}
	if len(modes) == 0 && len(problems) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "no agent modes; create .agent/agents/MODE.md holding the agent's system prompt")
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	for _, m := range modes {
		model := m.Model
		if model == "" {
			model = "-"
		}
		sk := strings.Join(m.Skills, ",")
		if sk == "" {
			sk = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, model, sk, mdtext.Shorten(m.Description, 70))
	}
	tw.Flush()
	skillsPrintProblems(o.IO, problems)
	return nil
}
