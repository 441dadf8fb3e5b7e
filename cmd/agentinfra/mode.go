package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/skills"
)

func newCmdMode(f *Factory) *cobra.Command {
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
	cmd.AddCommand(newCmdModeList(f))
	return cmd
}

type modeJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Model       string   `json:"model"`
	Skills      []string `json:"skills"`
	Path        string   `json:"path"`
}

func newCmdModeList(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agent modes with their model and skills",
		Example: `  agentinfra mode list
  agentinfra mode list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			modes, problems, err := skills.ListModes(cmd.Context(), ws)
			if err != nil {
				return err
			}
			if asJSON {
				out := struct {
					Modes    []modeJSON         `json:"modes"`
					Problems []skillProblemJSON `json:"problems"`
				}{Modes: []modeJSON{}, Problems: skillsProblemsJSON(ws, problems)}
				for _, m := range modes {
					out.Modes = append(out.Modes, modeJSON{Name: m.Name, Description: m.Description, Model: m.Model,
						Skills: m.Skills, Path: ws.RelPath(m.Path)})
				}
				return jsonout.Write(f.IO.Out, out)
			}
			if len(modes) == 0 && len(problems) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no agent modes; create .agent/agents/MODE.md holding the agent's system prompt")
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
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
			skillsPrintProblems(f, ws, problems)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {modes: [{name, description, model, skills, path}], problems: [...]}")
	return cmd
}
