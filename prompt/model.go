package prompt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// Model tiers.
const (
	TierFast = "fast"
	TierDeep = "deep"
)

// Environment variables naming the model of each tier, and their defaults.
const (
	EnvModelFast     = "GEMINI_MODEL_FAST"
	EnvModelDeep     = "GEMINI_MODEL_DEEP"
	DefaultModelFast = "gemini-2.5-flash"
	DefaultModelDeep = "gemini-2.5-pro"
)

// DeepModes get the deep tier at difficulty med: planning and research work.
var DeepModes = []string{"architect", "deep-researcher", "designer", "oracle", "orchestrator", "planner", "researcher"}

// FastModes get the fast tier at difficulty med (as does any mode not in DeepModes).
var FastModes = []string{"explorer", "flash", "librarian", "recon", "summarize"}

// ModelConfig is the "models" section of the workspace config file
// .agent/config.yaml (config.Models):
//
//	models:
//	  fast: gemini-2.5-flash   # model of the fast tier (the environment wins)
//	  deep: gemini-2.5-pro     # model of the deep tier (the environment wins)
//	  modes:                   # per-mode override of the difficulty rule
//	    coder: deep            # a tier (fast|deep) or a model name
type ModelConfig struct {
	Fast  string            `json:"fast"`
	Deep  string            `json:"deep"`
	Modes map[string]string `json:"modes"`
	// Path is the file it was read from ("" when there is none).
	Path string `json:"path"`
}

// ModelConfigOf is the workspace's models section (from ws.Config: the file
// is read once per workspace). A missing file is an empty config.
func ModelConfigOf(ws *workspace.Workspace) (ModelConfig, error) {
	c, err := ws.Config()
	if err != nil {
		return ModelConfig{}, err
	}
	m, err := c.Models()
	if err != nil {
		return ModelConfig{}, err
	}
	out := ModelConfig{Fast: m.Fast, Deep: m.Deep, Modes: m.Modes}
	if c.Exists {
		out.Path = c.Path
	}
	return out, nil
}

// ModelInput is what the model choice depends on.
type ModelInput struct {
	Mode       string // the task's (or requested) mode
	Difficulty string // easy|med|hard ("" means med)
	// ModeModel is the mode file's front matter `model:` (fast|deep|a model name), if any.
	ModeModel string
	// ModePath names the mode file in the reason (optional).
	ModePath string
	Config   ModelConfig
	// Getenv reads GEMINI_MODEL_FAST / GEMINI_MODEL_DEEP; nil means no environment.
	Getenv func(string) string
}

// ModelChoice is the selected model and why.
type ModelChoice struct {
	Model  string `json:"model"`
	Tier   string `json:"tier"` // "fast" | "deep" | "" (an explicit model name)
	Reason string `json:"reason"`
}

// ruleDifficulty is the difficulty the model rule reads: blank is med, and
// anything matrix.NormalizeDifficulty knows (M, trivial, XL, ...) is mapped to
// easy, med or hard; anything else wraps matrix.ErrInvalid.
func ruleDifficulty(d string) (string, error) {
	if strings.TrimSpace(d) == "" {
		return "med", nil
	}
	if v, err := matrix.NormalizeDifficulty(d); err == nil {
		return v, nil
	}
	return "", fmt.Errorf("%w: unknown difficulty %q; use easy, med or hard", matrix.ErrInvalid, d)
}

// isTier reports whether v names a tier (fast or deep, any case) rather than a model.
func isTier(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == TierFast || v == TierDeep
}

// SelectModel picks the model. A model name (not a tier) in the mode's front
// matter `model:`, else in the workspace config's models.modes entry for the
// mode, is used at every difficulty. Otherwise the difficulty rule decides:
// hard → deep; easy → fast; med → the mode's tier, which is its front
// matter's `model: fast|deep`, else its models.modes tier, else deep for
// DeepModes and fast for any other mode. A tier resolves to
// $GEMINI_MODEL_FAST/$GEMINI_MODEL_DEEP, else the config's
// models.fast/models.deep, else the defaults.
func SelectModel(in ModelInput) (ModelChoice, error) {
	diff, err := ruleDifficulty(in.Difficulty)
	if err != nil {
		return ModelChoice{}, err
	}
	mode := strings.TrimSpace(in.Mode)
	// The mode's own setting, if any: where it is written, and its value.
	var own, ownWhy string
	if v := strings.TrimSpace(in.ModeModel); v != "" {
		where := "the mode's front matter"
		if in.ModePath != "" {
			where = in.ModePath
		}
		own, ownWhy = v, fmt.Sprintf("mode %s sets model: %s in %s", mode, v, where)
	} else if v := strings.TrimSpace(in.Config.Modes[mode]); v != "" && mode != "" {
		where := "the workspace config"
		if in.Config.Path != "" {
			where = in.Config.Path
		}
		own, ownWhy = v, fmt.Sprintf("models.modes.%s: %s in %s", mode, v, where)
	}
	if own != "" && !isTier(own) {
		return in.resolve(own, ownWhy+" (a model name: used at every difficulty)"), nil
	}
	var tier, why string
	switch {
	case diff == "hard":
		tier, why = TierDeep, "difficulty hard → deep"
	case diff == "easy":
		tier, why = TierFast, "difficulty easy → fast"
	case own != "":
		tier, why = strings.ToLower(own), fmt.Sprintf("difficulty med and %s → %s", ownWhy, strings.ToLower(own))
	case slices.Contains(DeepModes, mode):
		tier, why = TierDeep, fmt.Sprintf("difficulty med and mode %s is a planning/research mode → deep", mode)
	case slices.Contains(FastModes, mode):
		tier, why = TierFast, fmt.Sprintf("difficulty med and mode %s is a quick-look mode → fast", mode)
	case mode == "":
		tier, why = TierFast, "difficulty med and no mode → fast"
	default:
		tier, why = TierFast, fmt.Sprintf("difficulty med and mode %s is not a planning/research mode → fast", mode)
	}
	return in.resolve(tier, why), nil
}

// resolve turns a tier or model name into a choice, naming where the tier's model came from.
func (in ModelInput) resolve(v, why string) ModelChoice {
	tier := strings.ToLower(v)
	if tier != TierFast && tier != TierDeep {
		return ModelChoice{Model: v, Tier: "", Reason: why}
	}
	env, cfg, def := EnvModelFast, in.Config.Fast, DefaultModelFast
	if tier == TierDeep {
		env, cfg, def = EnvModelDeep, in.Config.Deep, DefaultModelDeep
	}
	var model, src string
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	switch {
	case strings.TrimSpace(getenv(env)) != "":
		model, src = strings.TrimSpace(getenv(env)), "$"+env
	case strings.TrimSpace(cfg) != "":
		model, src = strings.TrimSpace(cfg), "models."+tier+" in the workspace config"
	default:
		model, src = def, "default; set $"+env+" to change"
	}
	return ModelChoice{Model: model, Tier: tier, Reason: fmt.Sprintf("%s; %s tier = %s (%s)", why, tier, model, src)}
}

// ChooseModel is SelectModel with its inputs read from the workspace: the
// mode file's front matter `model:` (a missing mode file is no error: the rule
// applies) and .agent/config.yaml. Paths in the reason are workspace-relative.
// getenv reads GEMINI_MODEL_FAST/GEMINI_MODEL_DEEP (nil: no environment).
func ChooseModel(ctx context.Context, ws *workspace.Workspace, mode, difficulty string, getenv func(string) string) (ModelChoice, error) {
	in := ModelInput{Mode: mode, Difficulty: difficulty, Getenv: getenv}
	if strings.TrimSpace(mode) != "" {
		m, err := skills.LoadMode(ctx, ws, strings.TrimSpace(mode))
		switch {
		case err == nil:
			in.ModeModel, in.ModePath = m.Model, ws.RelPath(m.Path)
		case errors.Is(err, skills.ErrNotFound):
			// No mode file: the config and the rule still apply.
		default:
			return ModelChoice{}, err
		}
	}
	cfg, err := ModelConfigOf(ws)
	if err != nil {
		return ModelChoice{}, err
	}
	if cfg.Path != "" {
		cfg.Path = ws.RelPath(cfg.Path)
	}
	in.Config = cfg
	return SelectModel(in)
}

// ModelQuery asks for the model of a task (ID), of a mode and difficulty, or of
// a task with its mode or difficulty overridden.
type ModelQuery struct {
	ID, Mode, Difficulty string
}

// ModelAnswer is a resolved ModelQuery and its choice: the shape of both
// `agentinfra model --json` and the MCP select_model result.
type ModelAnswer struct {
	TaskID     string `json:"task_id"`
	Mode       string `json:"mode"`
	Difficulty string `json:"difficulty"`
	Model      string `json:"model"`
	Tier       string `json:"tier"`
	Reason     string `json:"reason"`
}

// ModelFor answers q: the task's mode and difficulty fill what q leaves
// empty, the difficulty is normalized (blank is med; an unknown one wraps
// matrix.ErrInvalid), and ChooseModel decides. lookup reads a
// task (LoadTask, or a caller's cache).
func ModelFor(ctx context.Context, ws *workspace.Workspace, q ModelQuery, lookup func(context.Context, string) (matrix.Task, error), getenv func(string) string) (ModelAnswer, error) {
	out := ModelAnswer{Mode: strings.TrimSpace(q.Mode), Difficulty: q.Difficulty}
	if id := strings.TrimSpace(q.ID); id != "" {
		t, err := lookup(ctx, id)
		if err != nil {
			return out, err
		}
		out.TaskID = t.ID
		if out.Mode == "" {
			out.Mode = t.Mode
		}
		if out.Difficulty == "" {
			out.Difficulty = t.Difficulty
		}
	}
	d, err := ruleDifficulty(out.Difficulty)
	if err != nil {
		return out, err
	}
	out.Difficulty = d
	choice, err := ChooseModel(ctx, ws, out.Mode, out.Difficulty, getenv)
	if err != nil {
		return out, err
	}
	out.Model, out.Tier, out.Reason = choice.Model, choice.Tier, choice.Reason
	return out, nil
}
