package prompt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestSelectModelRule(t *testing.T) {
	noEnv := map[string]string{}
	env := map[string]string{EnvModelFast: "flash-x", EnvModelDeep: "pro-x"}
	cfg := ModelConfig{Fast: "cfg-fast", Deep: "cfg-deep", Modes: map[string]string{"coder": "deep", "reviewer": "my-model-1"}, Path: ".agent/config.yaml"}
	cases := []struct {
		name                     string
		mode, diff, modeModel    string
		cfg                      ModelConfig
		env                      map[string]string
		model, tier, reasonMatch string
	}{
		// The difficulty rule with default tier models.
		{"hard any mode", "coder", "hard", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "difficulty hard"},
		{"hard fast mode", "explorer", "hard", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "difficulty hard"},
		{"easy any mode", "oracle", "easy", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "difficulty easy"},
		{"easy HARD case", "coder", "EASY", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "difficulty easy"},
		{"med oracle", "oracle", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med orchestrator", "orchestrator", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med deep-researcher", "deep-researcher", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med designer", "designer", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med planner", "planner", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med architect", "architect", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med researcher", "researcher", "med", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "planning/research"},
		{"med recon", "recon", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "quick-look"},
		{"med explorer", "explorer", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "quick-look"},
		{"med flash", "flash", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "quick-look"},
		{"med summarize", "summarize", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "quick-look"},
		{"med librarian", "librarian", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "quick-look"},
		{"med other", "coder", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "not a planning/research mode"},
		{"empty difficulty is med", "oracle", "", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "difficulty med"},
		{"medium alias", "oracle", "medium", "", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "difficulty med"},
		{"no mode", "", "med", "", ModelConfig{}, noEnv, DefaultModelFast, TierFast, "no mode"},
		// Tier models: environment beats config beats default.
		{"env names tiers", "oracle", "hard", "", cfg, env, "pro-x", TierDeep, "$GEMINI_MODEL_DEEP"},
		{"config names tiers", "explorer", "easy", "", cfg, noEnv, "cfg-fast", TierFast, "models.fast in the workspace config"},
		// Overrides: config per mode beats the rule; front matter beats config.
		// A model name pins the model at every difficulty; a tier is only the
		// mode's tier at difficulty med, so easy and hard still decide.
		{"config mode tier at med", "coder", "med", "", cfg, noEnv, "cfg-deep", TierDeep, "difficulty med and models.modes.coder: deep"},
		{"config mode tier at easy", "coder", "easy", "", cfg, noEnv, "cfg-fast", TierFast, "difficulty easy"},
		{"config mode model name", "reviewer", "easy", "", cfg, noEnv, "my-model-1", "", "models.modes.reviewer: my-model-1"},
		{"front matter tier at med", "coder", "med", "deep", cfg, env, "pro-x", TierDeep, "difficulty med and mode coder sets model: deep"},
		{"front matter tier at hard", "coder", "hard", "fast", cfg, env, "pro-x", TierDeep, "difficulty hard"},
		{"front matter tier beats config tier", "coder", "med", "fast", cfg, env, "flash-x", TierFast, "mode coder sets model: fast"},
		{"front matter model name", "oracle", "easy", "gemini-2.5-pro", cfg, env, "gemini-2.5-pro", "", "sets model: gemini-2.5-pro"},
		{"front matter tier any case", "x", "med", "Deep", ModelConfig{}, noEnv, DefaultModelDeep, TierDeep, "sets model: Deep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectModel(ModelInput{Mode: tc.mode, Difficulty: tc.diff, ModeModel: tc.modeModel, Config: tc.cfg,
				Getenv: func(k string) string { return tc.env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			if got.Model != tc.model || got.Tier != tc.tier || !strings.Contains(got.Reason, tc.reasonMatch) {
				t.Errorf("got %+v, want model %s tier %q reason containing %q", got, tc.model, tc.tier, tc.reasonMatch)
			}
		})
	}
	if _, err := SelectModel(ModelInput{Mode: "coder", Difficulty: "extreme"}); !errors.Is(err, matrix.ErrInvalid) || !strings.Contains(err.Error(), "easy, med or hard") {
		t.Errorf("bad difficulty error = %v", err)
	}
}

func TestModelConfigOf(t *testing.T) {
	dir := t.TempDir()
	ws, _ := workspace.New(dir)
	cfg, err := ModelConfigOf(ws)
	if err != nil || cfg.Path != "" || cfg.Modes != nil {
		t.Fatalf("missing config = %+v, %v", cfg, err)
	}
	if err := os.MkdirAll(ws.AgentDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws.AgentDir(), "config.yaml")
	os.WriteFile(path, []byte("other: 1\nmodels:\n  deep: big\n  modes:\n    coder: deep\n"), 0o644)
	ws, _ = workspace.New(dir) // a workspace reads its config once: a new one reads the new file
	cfg, err = ModelConfigOf(ws)
	if err != nil || cfg.Deep != "big" || cfg.Modes["coder"] != "deep" || cfg.Path != path {
		t.Fatalf("config = %+v, %v", cfg, err)
	}
	os.WriteFile(path, []byte("models: [\n"), 0o644)
	ws, _ = workspace.New(dir)
	if _, err := ModelConfigOf(ws); err == nil || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("broken config error = %v", err)
	}
}

func TestModelForMergesTaskAndOverrides(t *testing.T) {
	ws, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	task := matrix.Task{ID: "a1b2c3", Mode: "oracle", Difficulty: "easy"}
	lookup := func(_ context.Context, id string) (matrix.Task, error) {
		if id != task.ID {
			return matrix.Task{}, fmt.Errorf("%w: %s", matrix.ErrNotFound, id)
		}
		return task, nil
	}
	for _, c := range []struct {
		q               ModelQuery
		mode, diff, mdl string
	}{
		{ModelQuery{ID: "a1b2c3"}, "oracle", "easy", "gemini-2.5-flash"},                 // the task's own values
		{ModelQuery{ID: "a1b2c3", Difficulty: "med"}, "oracle", "med", "gemini-2.5-pro"}, // difficulty overridden
		{ModelQuery{ID: "a1b2c3", Mode: "coder", Difficulty: "med"}, "coder", "med", "gemini-2.5-flash"},
		{ModelQuery{Mode: "oracle"}, "oracle", "med", "gemini-2.5-pro"}, // no task: med by default
	} {
		got, err := ModelFor(context.Background(), ws, c.q, lookup, noEnv)
		if err != nil {
			t.Fatalf("%+v: %v", c.q, err)
		}
		if got.Mode != c.mode || got.Difficulty != c.diff || got.Model != c.mdl || got.Reason == "" {
			t.Errorf("%+v → %+v; want mode %s, difficulty %s, model %s, a reason", c.q, got, c.mode, c.diff, c.mdl)
		}
	}
	if _, err := ModelFor(context.Background(), ws, ModelQuery{ID: "ffffff"}, lookup, noEnv); !errors.Is(err, matrix.ErrNotFound) {
		t.Errorf("unknown ID: err = %v, want ErrNotFound", err)
	}
}

// The starter modes that `agentinfra init` writes, and this repository's own
// modes, leave the difficulty rule alive: an easy task gets the fast tier and
// a hard one the deep tier whatever the mode, and med follows the mode
// (docs/skills.md, "Model selection").
func TestStarterModesFollowTheDifficultyRule(t *testing.T) {
	root := t.TempDir()
	if _, err := tasksvc.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	starter, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := workspace.New("..")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{ // mode → difficulty → tier
		"coder":    {"easy": TierFast, "med": TierFast, "hard": TierDeep},
		"explorer": {"easy": TierFast, "med": TierFast, "hard": TierDeep},
		"oracle":   {"easy": TierFast, "med": TierDeep, "hard": TierDeep},
		"reviewer": {"easy": TierFast, "med": TierDeep, "hard": TierDeep},
	}
	for name, ws := range map[string]*workspace.Workspace{"init": starter, "repository": repo} {
		modes := skills.ModeNames(ws)
		if len(modes) != len(want) {
			t.Fatalf("%s: the modes are %v; this table covers %d", name, modes, len(want))
		}
		for _, mode := range modes {
			for _, diff := range []string{"easy", "med", "hard"} {
				got, err := ChooseModel(context.Background(), ws, mode, diff, noEnv)
				if err != nil {
					t.Fatalf("%s %s/%s: %v", name, mode, diff, err)
				}
				if got.Tier != want[mode][diff] {
					t.Errorf("%s: %s task of difficulty %s: tier %q (%s), want %q", name, mode, diff, got.Tier, got.Reason, want[mode][diff])
				}
			}
		}
	}
}
