package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/dispatch"
)

func init() { registerCommand(newCmdModel) }

type modelJSON struct {
	TaskID     string `json:"task_id"`
	Mode       string `json:"mode"`
	Difficulty string `json:"difficulty"`
	Model      string `json:"model"`
	Tier       string `json:"tier"`
	Reason     string `json:"reason"`
}

func newCmdModel(f *Factory) *cobra.Command {
	var asJSON bool
	var mode, difficulty string
	cmd := &cobra.Command{
		Use:   "model [ID]",
		Short: "Pick the model for a task, or for a mode and difficulty, and say why",
		Long: `Pick the model an agent should run with.

Rule: difficulty hard → deep tier; easy → fast tier; med → deep for planning and
research modes (oracle, orchestrator, deep-researcher, designer, planner,
architect, researcher), else fast. The fast tier is $GEMINI_MODEL_FAST (default
gemini-2.5-flash), the deep tier $GEMINI_MODEL_DEEP (default gemini-2.5-pro).

Overrides, strongest first: the mode file's front matter "model:" (fast, deep or
a model name), then .agent/config.yaml:

  models:
    fast: gemini-2.5-flash   # tier models when the environment does not set them
    deep: gemini-2.5-pro
    modes:
      coder: deep            # per-mode tier or model name

With ID, the mode and difficulty come from the task's matrix row (--mode and
--difficulty override them).`,
		Example: `  agentinfra model 3f9a1c
  agentinfra model --mode oracle --difficulty med --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && mode == "" && difficulty == "" {
				return usageErrorf("pass a task ID, or --mode and --difficulty")
			}
			if difficulty != "" {
				d, err := dispatch.NormalizeDifficulty(difficulty)
				if err != nil {
					return usageErrorf("--difficulty: %v", err)
				}
				difficulty = d
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			out := modelJSON{Mode: mode, Difficulty: difficulty}
			if len(args) == 1 {
				t, err := dispatch.LoadTask(cmd.Context(), ws, args[0])
				if err != nil {
					return err
				}
				out.TaskID = t.ID
				if out.Mode == "" {
					out.Mode = t.Mode
				}
				if out.Difficulty == "" {
					out.Difficulty = t.Difficulty
				}
			}
			if out.Difficulty == "" {
				out.Difficulty = "med"
			}
			choice, err := dispatch.ChooseModel(cmd.Context(), ws, out.Mode, out.Difficulty, f.Getenv)
			if err != nil {
				return err
			}
			out.Model, out.Tier, out.Reason = choice.Model, choice.Tier, choice.Reason
			if asJSON {
				return skillsWriteJSON(f.IO.Out, out)
			}
			fmt.Fprintln(f.IO.Out, out.Model)
			fmt.Fprintf(f.IO.Out, "reason: %s\n", out.Reason)
			return nil
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "agent mode (overrides the task's)")
	cmd.Flags().StringVar(&difficulty, "difficulty", "", "easy, med or hard (overrides the task's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {task_id, mode, difficulty, model, tier, reason}")
	return cmd
}
