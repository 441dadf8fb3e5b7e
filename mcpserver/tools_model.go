package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
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
			Description: "Pick the model for a task (id) or a mode and difficulty, and say why: hard → deep tier, " +
				"easy → fast, med → the mode's tier (front matter model: fast|deep, or .agent/config.yaml); " +
				"a model name there is used at every difficulty.",
			Annotations: readOnly("Select model"),
		},
		Props: map[string]prop{
			"id":         {},
			"mode":       {Desc: "Overrides the task's."},
			"difficulty": {Desc: "Overrides the task's; else med.", Enum: matrix.Difficulties},
		},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in ModelInput, raw map[string]json.RawMessage) (ModelOutput, string, error) {
		q := prompt.ModelQuery{ID: in.ID, Mode: in.Mode, Difficulty: in.Difficulty}
		if strings.TrimSpace(in.ID) == "" && strings.TrimSpace(in.Mode) == "" && in.Difficulty == "" {
			return ModelOutput{}, "", fieldErrorf("id", "pass id, or mode and difficulty")
		}
		lookup := func(ctx context.Context, id string) (matrix.Task, error) {
			t, _, err := s.task(ctx, id)
			return t, err
		}
		out, err := prompt.ModelFor(ctx, s.ws, q, lookup, s.opts.Getenv)
		if err != nil && in.Difficulty != "" && errors.Is(err, matrix.ErrInvalid) {
			err = fieldErrorf("difficulty", "%v", err)
		} else if err != nil && out.Mode != "" && !errors.Is(err, matrix.ErrInvalid) && agenterr.As(err) == nil {
			err = asField("mode", err)
		}
		if err != nil {
			return out, "", err
		}
		return out, out.Model + "\nreason: " + out.Reason, nil
	})
}
