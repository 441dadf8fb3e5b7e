package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/workspace"
)

// modelJSON is the --json shape, shared with the MCP select_model result.
type modelJSON = prompt.ModelAnswer

// ModelOptions is what `model` runs with.
type ModelOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Getenv    func(string) string

	// ID is the task ("" when --mode and --difficulty say it all).
	ID         string
	Mode       string
	Difficulty string
	JSON       bool
}

func NewCmdModel(f *Factory, runF func(context.Context, *ModelOptions) error) *cobra.Command {
	o := &ModelOptions{IO: f.IO, Workspace: f.Workspace, Getenv: f.Getenv}
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
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.ID = args[0]
			}
			if o.ID == "" && o.Mode == "" && o.Difficulty == "" {
				return UsageErrorf("pass a task ID, or --mode and --difficulty")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return modelRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Mode, "mode", "", "agent mode (overrides the task's)")
	cmd.Flags().StringVar(&o.Difficulty, "difficulty", "", "easy, med or hard (overrides the task's)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: {task_id, mode, difficulty, model, tier, reason}")
	RegisterFlagCompletion(cmd, "mode", CompleteModes(f))
	RegisterFlagCompletion(cmd, "difficulty", cobra.FixedCompletions(matrix.Difficulties, NoFiles))
	return cmd
}

func modelRun(ctx context.Context, o *ModelOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	out, err := prompt.ModelFor(ctx, ws, prompt.ModelQuery{ID: o.ID, Mode: o.Mode, Difficulty: o.Difficulty},
		func(ctx context.Context, id string) (matrix.Task, error) { return prompt.LoadTask(ctx, ws, id) }, o.Getenv)
	if err != nil && o.Difficulty != "" && errors.Is(err, matrix.ErrInvalid) {
		return UsageErrorf("--difficulty: %v", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return jsonout.Write(o.IO.Out, out)
	}
	fmt.Fprintln(o.IO.Out, out.Model)
	fmt.Fprintf(o.IO.Out, "reason: %s\n", out.Reason)
	return nil
}
