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
type ModelOutput = dispatch.ModelAnswer

func (s *Server) addModelTool() error {
	return addTool(s.mcp, toolSpec{
		Tool: &mcp.Tool{
			Name: "select_model",
			Description: "Pick the model for a task (id) or a mode and difficulty, and say why: hard → deep tier, " +
				"easy → fast, med → deep for planning and research modes, else fast, unless the mode or " +
				".agent/config.yaml names one.",
			Annotations: readOnly("Select model"),
		},
		Props: map[string]prop{
			"id":         {},
			"mode":       {Desc: "Overrides the task's."},
			"difficulty": {Desc: "Overrides the task's; else med.", Enum: matrix.Difficulties},
		},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in ModelInput, raw map[string]json.RawMessage) (ModelOutput, string, error) {
		q := dispatch.ModelQuery{ID: in.ID, Mode: in.Mode}
		if strings.TrimSpace(in.ID) == "" && strings.TrimSpace(in.Mode) == "" && in.Difficulty == "" {
			return ModelOutput{}, "", fieldErrorf("id", "pass id, or mode and difficulty")
		}
		if in.Difficulty != "" {
			d, err := dispatch.NormalizeDifficulty(in.Difficulty)
			if err != nil {
				return ModelOutput{}, "", fieldErrorf("difficulty", "%v", err)
			}
			q.Difficulty = d
		}
		out, err := dispatch.ModelFor(ctx, s.ws, q, s.task, s.opts.Getenv)
		var fe *fieldError
		if err != nil && !errors.As(err, &fe) && out.Mode != "" && !errors.Is(err, matrix.ErrInvalid) {
			err = fieldErrorf("mode", "%v", err)
		}
		if err != nil {
			return out, "", err
		}
		return out, out.Model + "\nreason: " + out.Reason, nil
	})
}
