package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
)

// ModelInput is the input of select_model.
type ModelInput struct {
	ID         string `json:"id,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Difficulty string `json:"difficulty,omitempty"`
}

// ModelOutput is the result of select_model (the same fields as `agentinfra model --json`).
type ModelOutput = prompt.ModelAnswer

func (s *Server) addModelTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "select_model",
			Description: "Pick the model for a task (id) or for a mode and difficulty, and say why. Rule: hard → deep " +
				"tier, easy → fast tier, med → the mode's tier (its front matter model: fast|deep or .agent/config.yaml, " +
				"else deep for planning and research modes, fast otherwise); a model name there is used at every " +
				"difficulty. Tiers come from GEMINI_MODEL_FAST / GEMINI_MODEL_DEEP.",
			Annotations: readOnly("Select model"),
		},
		Props: map[string]prop{
			"id":         {Desc: "Task ID; its mode and difficulty are used unless mode or difficulty is given. Pass id, or mode and difficulty."},
			"mode":       {Desc: "Agent mode (overrides the task's), e.g. coder, oracle."},
			"difficulty": {Desc: "Task difficulty (overrides the task's); med when neither is given.", Enum: matrix.Difficulties},
		},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in ModelInput, raw map[string]json.RawMessage) (ModelOutput, string, error) {
		q := prompt.ModelQuery{ID: in.ID, Mode: in.Mode, Difficulty: in.Difficulty}
		if strings.TrimSpace(in.ID) == "" && strings.TrimSpace(in.Mode) == "" && in.Difficulty == "" {
			return ModelOutput{}, "", fieldErrorf("id", "pass id, or mode and difficulty")
		}
		out, err := prompt.ModelFor(ctx, s.ws, q, s.task, s.opts.Getenv)
		var fe *fieldError
		if err != nil && in.Difficulty != "" && errors.Is(err, matrix.ErrInvalid) {
			err = fieldErrorf("difficulty", "%v", err)
		}
		if err != nil && !errors.As(err, &fe) && out.Mode != "" && !errors.Is(err, matrix.ErrInvalid) {
			err = fieldErrorf("mode", "%v", err)
		}
		if err != nil {
			return out, "", err
		}
		return out, out.Model + "\nreason: " + out.Reason, nil
	})
}
