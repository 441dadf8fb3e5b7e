package agentrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// ChooseModel is the model of a run and why. An explicit model wins.
// gemini gets the tier rule of the mode and difficulty (prompt.ChooseModel:
// the mode's front matter, .agent/config.yaml, $GEMINI_MODEL_FAST/DEEP).
// The tiers name gemini models, so claude and codex take only a model the
// mode or config names explicitly, else their own default ("" model).
func ChooseModel(ctx context.Context, ws *workspace.Workspace, cli, mode, difficulty, explicit string, getenv func(string) string) (model, reason string, err error) {
	if m := strings.TrimSpace(explicit); m != "" {
		return m, "--model " + m + " (explicit)", nil
	}
	choice, err := prompt.ChooseModel(ctx, ws, mode, difficulty, getenv)
	if err != nil {
		return "", "", err
	}
	if cli == "" || cli == runner.CLIGemini || choice.Tier == "" {
		return choice.Model, choice.Reason, nil
	}
	return "", fmt.Sprintf("%s's default model (the %s tier names a gemini model; pass --model to choose)", cli, choice.Tier), nil
}
