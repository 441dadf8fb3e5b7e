package coder_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
)

// The spec of a workspace made in Coder is the prompt its template's
// agent started on: the prompt parameter of its build.
func TestSpecOfAWorkspaceMadeInCoderIsItsPrompt(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	if _, err := w.srv.AddReadyWorkspace("me", "handmade", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	shown, err := w.b.Show(ctx, "handmade")
	if err != nil || shown.Spec != "Keep handmade green" || len(shown.Warnings) != 0 {
		t.Fatalf("show: spec %q warnings %q, %v", shown.Spec, shown.Warnings, err)
	}
	// Started by agentinfra, it has a record that keeps the spec: show
	// asks Coder's build parameters no more.
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: "handmade", Text: "look around"}); err != nil {
		t.Fatal(err)
	}
	asked := w.srv.Requests(codertest.RouteBuildParameters)
	if shown, err = w.b.Show(ctx, "handmade"); err != nil || shown.Spec != "Keep handmade green" {
		t.Fatalf("show after start: spec %q, %v", shown.Spec, err)
	}
	// Nor for an agent agentinfra created.
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the API tests green"}); err != nil {
		t.Fatal(err)
	}
	if shown, err = w.b.Show(ctx, "papi"); err != nil || shown.Spec != "keep the API tests green" {
		t.Fatalf("show papi: spec %q, %v", shown.Spec, err)
	}
	if n := w.srv.Requests(codertest.RouteBuildParameters); n != asked {
		t.Errorf("show asked for build parameters %d times though the records have the specs", n-asked)
	}

	// Coder failing to answer: no spec, and a warning that says why.
	if _, err := w.srv.AddReadyWorkspace("me", "other", "agents", ""); err != nil {
		t.Fatal(err)
	}
	w.srv.SetFault(codertest.RouteBuildParameters, codertest.Fault5xx)
	shown, err = w.b.Show(ctx, "other")
	if err != nil || shown.Spec != "" || len(shown.Warnings) != 1 {
		t.Fatalf("show with the parameters failing: spec %q warnings %q, %v", shown.Spec, shown.Warnings, err)
	}
	wantMention(t, errors.New(shown.Warnings[0]), "other shows no spec", `"AI Prompt"`, "503")
}

// coder.prompt_parameter names the parameter the spec is read from, as
// the one create puts it in.
func TestSpecIsReadFromTheConfiguredPromptParameter(t *testing.T) {
	srv := codertest.New(t)
	env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}
	b, err := coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{Config: coder.BackendConfig{PromptParameter: "system_prompt"},
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddReadyWorkspace("me", "handmade", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	// The preset sets system_prompt.
	if a, err := b.Show(context.Background(), "handmade"); err != nil || a.Spec != "You are the Operator." {
		t.Fatalf("spec %q, %v", a.Spec, err)
	}
}

// A role Coder will not name (its template version's presets answer 404)
// is not shown as no role silently: show and list carry a warning, in
// their results too; a start does not record the role as none.
func TestARoleCoderWillNotNameIsAWarning(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	if _, err := w.srv.AddReadyWorkspace("me", "handmade", "agents", "Operator"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s", Role: "Operator"}); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	w.srv.SetFault(codertest.RoutePresets, codertest.FaultNotFound)

	shown, err := w.b.Show(ctx, "handmade")
	if err != nil || shown.Role != "" || len(shown.Warnings) != 1 {
		t.Fatalf("show: role %q warnings %q, %v", shown.Role, shown.Warnings, err)
	}
	wantMention(t, errors.New(shown.Warnings[0]), "handmade shows no role", "template agents", "404")
	res := fleet.NewShowResult(shown)
	raw, _ := json.Marshal(res)
	var out struct {
		Agent    map[string]any `json:"agent"`
		Warnings []string       `json:"warnings"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Warnings) != 1 || out.Warnings[0] != shown.Warnings[0] || out.Agent["warnings"] != nil {
		t.Fatalf("show_agent's result: %s", raw)
	}

	before := w.srv.Requests(codertest.RoutePresets)
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if n := w.srv.Requests(codertest.RoutePresets) - before; n != 1 {
		t.Errorf("list asked for presets %d times, want once (handmade's version; papi's role is in its record)", n)
	}
	lr := fleet.NewListResult(list)
	if len(lr.Warnings) != 1 || !strings.Contains(lr.Warnings[0], "handmade shows no role") || list[1].Role != "Operator" {
		t.Fatalf("list_agents' warnings %q, papi's role %q", lr.Warnings, list[1].Role)
	}

	// A start meanwhile does not record "no role": once Coder answers,
	// the role is there.
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: "handmade", Text: "look around"}); err != nil {
		t.Fatal(err)
	}
	w.srv.SetFault(codertest.RoutePresets, codertest.NoFault)
	if shown, err = w.b.Show(ctx, "handmade"); err != nil || shown.Role != "Operator" || len(shown.Warnings) != 0 {
		t.Fatalf("show once Coder answers: role %q warnings %q, %v", shown.Role, shown.Warnings, err)
	}
}
