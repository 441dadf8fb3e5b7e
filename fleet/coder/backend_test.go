package coder_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/testing/treehash"
	"github.com/agentinfra/agentinfra/workspace"
)

func wantMention(t *testing.T, err error, words ...string) {
	t.Helper()
	for _, w := range words {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not say %q", err, w)
		}
	}
}

func TestRefusedCallsLeaveNothingBehind(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	before, err := treehash.Snapshot(w.ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"new", "create"} {
		_, err := w.b.Create(ctx, fleet.CreateInput{Name: name, Spec: "s"})
		fleettest.WantCode(t, err, fleet.CodeBadInput, "name")
		wantMention(t, err, "reserved")
	}
	if n := w.srv.Requests(codertest.RouteCreateWorkspace); n != 0 {
		t.Fatalf("%d creates reached Coder", n)
	}
	// Calls about an agent that does not exist write nothing either.
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: "nobody", Text: "x"}); fleet.CodeOf(err) != fleet.CodeNotFound {
		t.Fatalf("start of nobody: %v", err)
	}
	if _, err := w.b.Stop(ctx, "nobody"); fleet.CodeOf(err) != fleet.CodeNotFound {
		t.Fatalf("stop of nobody: %v", err)
	}
	if _, err := w.b.History(ctx, "nobody", 1, 20); fleet.CodeOf(err) != fleet.CodeNotFound {
		t.Fatalf("history of nobody: %v", err)
	}
	after, _ := treehash.Snapshot(w.ws.Root)
	if len(after) != len(before) {
		t.Fatalf("a refused call changed the workspace: %d files before, %d after", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("a refused call changed %s", p)
		}
	}
}

func TestTemplateWithoutThePromptParameterIsRefused(t *testing.T) {
	srv := codertest.New(t)
	ws := fleettest.NewRepo(t)
	env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}
	b, err := coder.OpenBackend(ws, coder.BackendOptions{Config: coder.BackendConfig{PromptParameter: "Task Prompt"},
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Create(context.Background(), fleet.CreateInput{Name: "papi", Spec: "s"})
	fleettest.WantCode(t, err, fleet.CodeBadInput, "project")
	wantMention(t, err, `"Task Prompt"`, "coder.prompt_parameter")
	if n := srv.Requests(codertest.RouteCreateWorkspace); n != 0 {
		t.Fatalf("%d creates reached Coder", n)
	}
}

// List asks Coder once, whatever the number of agents: the status comes
// from the list's builds, agents and latest app statuses.
func TestListIsOneCallForAllAgents(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5"} {
		if _, err := w.b.Create(ctx, fleet.CreateInput{Name: n, Spec: "work " + n}); err != nil {
			t.Fatal(err)
		}
	}
	w.srv.AddForeignWorkspace("bob", "bobs")
	for range 3 { // up and working on their specs
		w.srv.Advance()
	}
	calls := func() map[string]int {
		m := map[string]int{}
		for _, r := range []string{codertest.RouteWorkspaces, codertest.RouteWorkspaceByName, codertest.RoutePresets,
			codertest.RouteTemplates, codertest.RouteAppStatus} {
			m[r] = w.srv.Requests(r)
		}
		return m
	}
	before := calls()
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	after := calls()
	for r, n := range after {
		want := before[r]
		if r == codertest.RouteWorkspaces {
			want++
		}
		if n != want {
			t.Errorf("%s: %d requests for one list, want %d", r, n-before[r], want-before[r])
		}
	}
	if !strings.HasPrefix(w.srv.LastQuery(), "owner:me") {
		t.Errorf("list asked q=%q, not the user's own workspaces", w.srv.LastQuery())
	}
	if len(list) != 5 {
		t.Fatalf("list has %d agents, want the user's 5 (not bob's)", len(list))
	}
	for _, a := range list {
		if a.Status != fleet.StatusBusy || a.Role != "Coder" || a.Project != "Agents" || a.CurrentRun == nil || a.CurrentRun.Summary != "work "+a.Name {
			t.Errorf("listed %s: %s role %q project %q task %+v", a.Name, a.Status, a.Role, a.Project, a.CurrentRun)
		}
	}
	busy, err := w.b.List(ctx, fleet.ListFilter{Status: "idle"})
	if err != nil || len(busy) != 0 {
		t.Fatalf("idle agents: %+v, %v", busy, err)
	}
	if _, err := w.b.List(ctx, fleet.ListFilter{Project: "Agents"}); err != nil || !strings.Contains(w.srv.LastQuery(), "template:agents") {
		t.Fatalf("project filter asked q=%q: %v", w.srv.LastQuery(), err)
	}
}

// A workspace made in Coder (not by agentinfra) is an agent too; its role
// is its preset's name, asked once per template version.
func TestWorkspaceMadeElsewhereIsAnAgent(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	c := newClient(t, w.srv)
	createAgent(t, ctx, c, w.srv, "handmade") // preset Operator, prompt parameter set
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list %+v, %v", list, err)
	}
	a := list[0]
	if a.Name != "handmade" || a.Role != "Operator" || a.Status != fleet.StatusIdle || a.Spec != "" {
		t.Fatalf("listed %+v", a)
	}
	// Work given in Coder itself shows in show and in the history.
	app, _, _ := coder.FindApp(mustWorkspace(t, c, "handmade"), coder.DefaultAgentAPISlug)
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "typed in the dashboard"}); err != nil {
		t.Fatal(err)
	}
	shown, err := w.b.Show(ctx, "handmade")
	if err != nil || shown.Status != fleet.StatusBusy || shown.CurrentRun == nil || !strings.Contains(shown.CurrentRun.Summary, "typed in the dashboard") {
		t.Fatalf("shown %+v, %v", shown, err)
	}
	w.srv.Advance()
	res, err := w.b.Start(ctx, fleet.StartInput{Name: "handmade", Text: "now from agentinfra"})
	if err != nil {
		t.Fatal(err)
	}
	w.srv.Advance()
	h, err := w.b.History(ctx, "handmade", 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: agentinfra's run, the dashboard's, the spec's (the
	// prompt parameter, given in Coder too).
	if h.TotalCount != 3 || h.Tasks[0].ID != res.Task.ID || h.Tasks[0].Status != fleet.RunCompleted ||
		!strings.Contains(h.Tasks[1].Summary, "typed in the dashboard") || h.Tasks[1].Status != fleet.RunCompleted ||
		!strings.HasPrefix(h.Tasks[1].ID, "app-") || !strings.Contains(h.Tasks[2].Summary, "Keep the API tests green") {
		t.Fatalf("history %+v", h)
	}
}

func mustWorkspace(t *testing.T, c *coder.Client, name string) coder.Workspace {
	t.Helper()
	ws, err := c.WorkspaceByOwnerAndName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// Statuses follow the workspace's build straight through until it runs,
// then the Coder agent, then the AgentAPI.
func TestStatusFollowsTheBuildThenTheAgentThenTheApp(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	a, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"})
	if err != nil {
		t.Fatal(err)
	}
	seen := []fleet.Status{a.Status}
	for range 4 {
		w.srv.Advance()
		a, err := w.b.Show(ctx, "papi")
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, a.Status)
	}
	want := []fleet.Status{fleet.StatusPending, fleet.StatusStarting, fleet.StatusStarting, fleet.StatusBusy, fleet.StatusIdle}
	if strings.Join(statusWords(seen), " ") != strings.Join(statusWords(want), " ") {
		t.Fatalf("statuses %v, want %v", seen, want)
	}
	// A workspace stopped under a run: the run is recorded interrupted.
	if _, err := w.b.Start(ctx, fleet.StartInput{Name: "papi", Text: "long"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, w.srv)
	if _, err := c.CreateBuild(ctx, mustWorkspace(t, c, "papi").ID, coder.TransitionStop); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	a, err = w.b.Show(ctx, "papi")
	if err != nil || a.Status != fleet.StatusStopped || a.CurrentRun != nil {
		t.Fatalf("after a stop build: %+v, %v", a, err)
	}
	h, _ := w.b.History(ctx, "papi", 1, 20)
	if h.Tasks[0].Status != fleet.RunFailed || !strings.Contains(h.Tasks[0].ExitReason, "stopped") {
		t.Fatalf("the interrupted run: %+v", h.Tasks[0])
	}
	_, err = w.b.Start(ctx, fleet.StartInput{Name: "papi", Text: "x"})
	fleettest.WantCode(t, err, fleet.CodeConflict, "")
	// A build that fails: failed, with the job's error.
	w.srv.FailNextBuild("papi")
	if _, err := c.CreateBuild(ctx, mustWorkspace(t, c, "papi").ID, coder.TransitionStart); err != nil {
		t.Fatal(err)
	}
	w.srv.Settle()
	a, _ = w.b.Show(ctx, "papi")
	if a.Status != fleet.StatusFailed || !strings.Contains(a.Error, "terraform") {
		t.Fatalf("after a failed build: %s %q", a.Status, a.Error)
	}
}

func statusWords(s []fleet.Status) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

func TestCoderFailuresAreUnavailableAndSayWhatToCheck(t *testing.T) {
	ctx := context.Background()
	t.Run("5xx", func(t *testing.T) {
		w := newCoderWorld(t)
		w.srv.SetFault(codertest.RouteTemplates, codertest.Fault5xx)
		_, err := w.b.Projects(ctx)
		fleettest.WantCode(t, err, fleet.CodeUnavailable, "")
		wantMention(t, err, w.srv.URL, "503", "coder ping")
	})
	t.Run("timeout", func(t *testing.T) {
		srv := codertest.New(t)
		srv.SetFault(codertest.RouteWorkspaceByName, codertest.FaultTimeout)
		env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}
		b, err := coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{Getenv: func(k string) string { return env[k] }, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Show(ctx, "papi")
		fleettest.WantCode(t, err, fleet.CodeUnavailable, "")
		wantMention(t, err, srv.URL, "did not answer", "CODER_URL")
	})
	t.Run("unreachable", func(t *testing.T) {
		env := map[string]string{coder.EnvURL: "http://127.0.0.1:1", coder.EnvToken: "t"}
		b, err := coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.List(ctx, fleet.ListFilter{})
		fleettest.WantCode(t, err, fleet.CodeUnavailable, "")
		wantMention(t, err, "cannot reach Coder at http://127.0.0.1:1", "CODER_URL", "connection refused")
		if n := strings.Count(err.Error(), "cannot reach Coder"); n != 1 {
			t.Errorf("the error says it %d times: %v", n, err)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		srv := codertest.New(t)
		env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: "expired"}
		b, err := coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.List(ctx, fleet.ListFilter{})
		fleettest.WantCode(t, err, fleet.CodeUnavailable, "")
		wantMention(t, err, "missing or expired", "CODER_SESSION_TOKEN")
	})
	t.Run("app redirects to login", func(t *testing.T) {
		w := newCoderWorld(t)
		if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
			t.Fatal(err)
		}
		w.srv.Settle()
		w.srv.SetFault(codertest.RouteAppMessage, codertest.FaultLoginRedirect)
		_, err := w.b.Start(ctx, fleet.StartInput{Name: "papi", Text: "x"})
		fleettest.WantCode(t, err, fleet.CodeUnavailable, "")
		wantMention(t, err, "login", "CODER_SESSION_TOKEN")
		if h, _ := w.b.History(ctx, "papi", 1, 20); h.TotalCount != 1 {
			t.Fatalf("a start that did not reach the agent was recorded: %+v", h)
		}
	})
	t.Run("not configured", func(t *testing.T) {
		_, err := coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{})
		fleettest.WantCode(t, err, fleet.CodeUnavailable, coder.EnvURL)
		wantMention(t, err, "CODER_URL")
		_, err = coder.OpenBackend(fleettest.NewRepo(t), coder.BackendOptions{Config: coder.BackendConfig{URL: "https://coder.example.com"}})
		fleettest.WantCode(t, err, fleet.CodeUnavailable, coder.EnvToken)
		wantMention(t, err, "CODER_SESSION_TOKEN", "token_file")
	})
}

func TestDeleteDuringABuildIsAConflict(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	_, err := w.b.Delete(ctx, "papi", false)
	fleettest.WantCode(t, err, fleet.CodeConflict, "")
	wantMention(t, err, "build in progress")
	w.srv.Settle()
	if _, err := w.b.Delete(ctx, "papi", false); err != nil {
		t.Fatal(err)
	}
}

func TestConfigFileAndTokenFile(t *testing.T) {
	srv := codertest.New(t)
	ws := fleettest.NewRepo(t)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(srv.Token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgYAML := "fleet:\n  backend: coder\ncoder:\n  url: " + srv.URL + "\n  token_file: " + tok + "\n  app_slug: ccw\n"
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte(cfgYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := coder.BackendConfigOf(ws)
	if err != nil || cfg.URL != srv.URL || cfg.PromptParameter != coder.DefaultPromptParameter {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	_, err = coder.OpenBackend(ws, coder.BackendOptions{Config: cfg})
	fleettest.WantCode(t, err, fleet.CodeUnavailable, "token_file")
	wantMention(t, err, "chmod 600")
	os.Chmod(tok, 0o600)
	b, err := coder.OpenBackend(ws, coder.BackendOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Projects(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.AgentDir(), "config.yaml"), []byte("coder: [url\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ = workspace.New(ws.Root) // a workspace reads its config once: a new one reads the new file
	_, err = coder.BackendConfigOf(ws)
	fleettest.WantCode(t, err, fleet.CodeBadInput, "config")
}

// A hung AgentAPI does not hang show: the workspace's reported state
// answers.
func TestShowWithAHungAppFallsBackToTheReportedState(t *testing.T) {
	w := newCoderWorld(t)
	env := map[string]string{coder.EnvURL: w.srv.URL, coder.EnvToken: w.srv.Token}
	b, err := coder.OpenBackend(w.ws, coder.BackendOptions{Getenv: func(k string) string { return env[k] }, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w.b = b
	ctx := context.Background()
	if _, err := w.b.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "s"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		w.srv.Advance()
	}
	w.srv.SetFault(codertest.RouteAppStatus, codertest.FaultTimeout)
	a, err := w.b.Show(ctx, "papi") // the app never answers: only the client's timeout ends the call
	if err != nil || a.Status != fleet.StatusBusy {
		t.Fatalf("show with a hung app: %+v, %v", a, err)
	}
}

// list_agents and show_agent carry the Coder agent metadata of each agent's
// workspace, read from the workspaces the list already fetched (no second
// workspace call), and an agent without any has none and no error.
func TestAgentsCarryTheirWorkspaceMetadata(t *testing.T) {
	w := newCoderWorld(t)
	ctx := context.Background()
	for _, n := range []string{"papi", "sony"} {
		if _, err := w.b.Create(ctx, fleet.CreateInput{Name: n, Spec: "work " + n}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		w.srv.Advance()
	}
	if err := w.srv.SetAgentMetadata("papi", agentItem("pr", "Pull request", "812\n", "")); err != nil {
		t.Fatal(err)
	}
	list, err := w.b.List(ctx, fleet.ListFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v, %v", list, err)
	}
	before := w.srv.Requests(codertest.RouteWorkspaceByName) + w.srv.Requests(codertest.RouteWorkspaces)
	w.b.WithMetadata(ctx, list, metadata.ListFields)
	if after := w.srv.Requests(codertest.RouteWorkspaceByName) + w.srv.Requests(codertest.RouteWorkspaces); after != before {
		t.Errorf("metadata asked for the workspaces again: %d calls", after-before)
	}
	rows := fleet.NewListResult(list).Agents
	papi, sony := rows[0], rows[1]
	if papi.MetadataCount == nil || *papi.MetadataCount != 1 || papi.Metadata["pr"] == nil || *papi.Metadata["pr"] != "812" {
		t.Errorf("papi's row: count %v metadata %v", papi.MetadataCount, papi.Metadata)
	}
	if sony.MetadataCount == nil || *sony.MetadataCount != 0 || sony.MetadataError != "" {
		t.Errorf("sony's row: count %v error %q", sony.MetadataCount, sony.MetadataError)
	}
	// show_agent through a fresh backend (one per request, as MCP does).
	shown, err := w.b.Show(ctx, "papi")
	if err != nil {
		t.Fatal(err)
	}
	one := []fleet.Agent{shown}
	w.b.WithMetadata(ctx, one, metadata.AllFields)
	if f := one[0].Metadata["pr"]; one[0].MetadataCount != 1 || f.Value == nil || *f.Value != "812" || f.Schema.Description != "Pull request" {
		t.Errorf("shown metadata %+v", one[0].Metadata)
	}
}
