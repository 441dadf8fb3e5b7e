package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/matrix"
)

// ModelInput is the input of select_model.
type ModelInput struct {
	ID         string `json:"id,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Difficulty string `json:"difficulty,omitempty"`
}

// ModelOutput is the result of select_model (the same fields as `agentinfra model --json`).
type ModelOutput struct {
	TaskID     string `json:"task_id"`
	Mode       string `json:"mode"`
	Difficulty string `json:"difficulty"`
	Model      string `json:"model"`
	Tier       string `json:"tier"`
	Reason     string `json:"reason"`
}

func (s *Server) addModelTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "select_model",
			Description: "Pick the model for a task (id) or for a mode and difficulty, and say why. Rule: hard → deep " +
				"tier, easy → fast tier, med → deep for planning and research modes, else fast; a mode's front " +
				"matter model: and .agent/config.yaml override it. Tiers come from GEMINI_MODEL_FAST / GEMINI_MODEL_DEEP.",
			Annotations: readOnly("Select model"),
		},
		Props: map[string]prop{
			"id":         {Desc: "Task ID; its mode and difficulty are used unless mode or difficulty is given. Pass id, or mode and difficulty."},
			"mode":       {Desc: "Agent mode (overrides the task's), e.g. coder, oracle."},
			"difficulty": {Desc: "Task difficulty (overrides the task's); med when neither is given.", Enum: matrix.Difficulties},
		},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in ModelInput, raw map[string]json.RawMessage) (ModelOutput, string, error) {
		out := ModelOutput{Mode: strings.TrimSpace(in.Mode)}
		if strings.TrimSpace(in.ID) == "" && out.Mode == "" && in.Difficulty == "" {
			return out, "", fieldErrorf("id", "pass id, or mode and difficulty")
		}
		if in.Difficulty != "" {
			d, err := dispatch.NormalizeDifficulty(in.Difficulty)
			if err != nil {
				return out, "", fieldErrorf("difficulty", "%v", err)
			}
			out.Difficulty = d
		}
		if strings.TrimSpace(in.ID) != "" {
			t, err := s.task(ctx, in.ID)
			if err != nil {
				return out, "", err
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
		choice, err := s.selectModel(ctx, out.Mode, out.Difficulty)
		if err != nil {
			return out, "", err
		}
		out.Model, out.Tier, out.Reason = choice.Model, choice.Tier, choice.Reason
		return out, out.Model + "\nreason: " + out.Reason, nil
	})
}

func (s *Server) selectModel(ctx context.Context, mode, difficulty string) (dispatch.ModelChoice, error) {
	c, err := dispatch.ChooseModel(ctx, s.ws, mode, difficulty, s.opts.Getenv)
	if err != nil && mode != "" && !errors.Is(err, matrix.ErrInvalid) {
		return c, fieldErrorf("mode", "%v", err)
	}
	return c, err
}
