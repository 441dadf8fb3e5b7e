package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
)

// modelJSON is the --json shape, shared with the MCP select_model result.
type modelJSON = prompt.ModelAnswer

func newCmdModel(f *Factory) *cobra.Command {
	var asJSON bool
	var mode, difficulty string
	cmd := &cobra.Command{
		Use:   "model [ID]",
		Short: "Pick the model for a task, or for a mode and difficulty, and say why",
		Long: `Pick the model an agent should run with.

Rule: difficulty hard → deep tier; easy → fast tier; med → the mode's tier: the
one its front matter "model:" names (fast or deep), else its models.modes entry
in .agent/config.yaml, else deep for planning and research modes (oracle,
orchestrator, deep-researcher, designer, planner, architect, researcher) and
fast for any other. The fast tier is $GEMINI_MODEL_FAST (default
gemini-2.5-flash), the deep tier $GEMINI_MODEL_DEEP (default gemini-2.5-pro).

A model name (not a tier) in the front matter "model:", else in models.modes,
is used at every difficulty. .agent/config.yaml:

  models:
    fast: gemini-2.5-flash   # tier models when the environment does not set them
    deep: gemini-2.5-pro
    modes:
      coder: deep            # the mode's tier at med, or a model name

With ID, the mode and difficulty come from the task's matrix row (--mode and
--difficulty override them).`,
		Example: `  agentinfra model 3f9a1c
  agentinfra model --mode oracle --difficulty med --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && mode == "" && difficulty == "" {
				return usageErrorf("pass a task ID, or --mode and --difficulty")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			out, err := prompt.ModelFor(cmd.Context(), ws, prompt.ModelQuery{ID: firstArg(args), Mode: mode, Difficulty: difficulty},
				func(ctx context.Context, id string) (matrix.Task, error) { return prompt.LoadTask(ctx, ws, id) }, f.Getenv)
			if err != nil && difficulty != "" && errors.Is(err, matrix.ErrInvalid) {
				return usageErrorf("--difficulty: %v", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(f.IO.Out, out)
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

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}
