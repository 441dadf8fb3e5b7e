package coder_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

func newClient(t *testing.T, srv *codertest.Server) *coder.Client {
	t.Helper()
	c, err := coder.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantKind(t *testing.T, err error, kind coder.Kind, mentions ...string) *coder.Error {
	t.Helper()
	var ce *coder.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *coder.Error", err, err)
	}
	if ce.Kind != kind {
		t.Fatalf("error kind %v, want %v: %v", ce.Kind, kind, err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
	return ce
}

// createAgent creates workspace name from the fake's first template with
// its preset, and settles it until the agent is ready.
func createAgent(t *testing.T, ctx context.Context, c *coder.Client, srv *codertest.Server, name string) coder.Workspace {
	t.Helper()
	orgs, err := c.MyOrganizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tmpls, err := c.ListTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	presets, err := c.TemplateVersionPresets(ctx, tmpls[0].ActiveVersionID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: name, TemplateID: tmpls[0].ID,
		TemplateVersionPresetID: presets[1].ID,
		RichParameterValues:     []coder.WorkspaceBuildParameter{{Name: codertest.PromptParam, Value: "Keep the API tests green"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	ws, err := c.WorkspaceByOwnerAndName(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestProjectsAndRoles(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	srv.AddTemplate("web", "", "Reviewer")
	c := newClient(t, srv)

	tmpls, err := c.ListTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpls) != 2 || tmpls[0].Name != "agents" || tmpls[0].DisplayName != "Agents" || tmpls[1].DisplayName != "" {
		t.Fatalf("templates = %+v", tmpls)
	}
	presets, err := c.TemplateVersionPresets(ctx, tmpls[0].ActiveVersionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(presets) != 2 || presets[0].Name != "Coder" || !presets[0].Default || presets[1].Name != "Operator" || presets[1].ID == "" {
		t.Errorf("presets (in Coder's order, the first default) = %+v", presets)
	}
	params, err := c.TemplateVersionRichParameters(ctx, tmpls[0].ActiveVersionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(params) == 0 || params[0].Name != codertest.PromptParam {
		t.Errorf("rich parameters = %+v", params)
	}
	// A malformed version ID is a 400 (as Coder answers), an unknown one 404.
	_, err = c.TemplateVersionPresets(ctx, "not-a-uuid")
	wantKind(t, err, coder.KindInvalid, "Invalid UUID")
	_, err = c.TemplateVersionPresets(ctx, "6cbbea9f-08e0-46cd-bdba-410a5f3e5d5a")
	wantKind(t, err, coder.KindNotFound)
}

func TestBadTokenIsUnauthorized(t *testing.T) {
	srv := codertest.New(t)
	cfg := srv.Config()
	cfg.Token = "expired"
	c, err := coder.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListTemplates(context.Background())
	ce := wantKind(t, err, coder.KindUnauthorized, "missing or expired", "CODER_SESSION_TOKEN")
	if ce.Status != 401 || !errors.Is(err, coder.ErrUnauthorized) || ce.Kind.Domain() != agenterr.Unavailable {
		t.Errorf("status %d, Is(ErrUnauthorized) %v, kind %s", ce.Status, errors.Is(err, coder.ErrUnauthorized), ce.Kind.Domain())
	}
}

func TestWorkspaceLifecycle(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	orgs, err := c.MyOrganizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tmpls, _ := c.ListTemplates(ctx)
	presets, _ := c.TemplateVersionPresets(ctx, tmpls[0].ActiveVersionID)

	ws, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "papi", TemplateID: tmpls[0].ID,
		TemplateVersionPresetID: presets[1].ID,
		RichParameterValues:     []coder.WorkspaceBuildParameter{{Name: codertest.PromptParam, Value: "Keep the API tests green"}}})
	if err != nil {
		t.Fatal(err)
	}
	if ws.LatestBuild.Status != coder.BuildPending || ws.LatestAppStatus != nil || ws.TemplateDisplayName != "Agents" ||
		ws.LatestBuild.TemplateVersionPresetID == nil || *ws.LatestBuild.TemplateVersionPresetID != presets[1].ID {
		t.Fatalf("a created workspace: build %q, app status %v, template %q, preset %v",
			ws.LatestBuild.Status, ws.LatestAppStatus, ws.TemplateDisplayName, ws.LatestBuild.TemplateVersionPresetID)
	}

	// The clock moves the build and then the agent, one step at a time.
	type state struct{ build, agent, lifecycle string }
	observe := func() state {
		t.Helper()
		got, err := c.WorkspaceByOwnerAndName(ctx, "papi")
		if err != nil {
			t.Fatal(err)
		}
		st := state{build: got.LatestBuild.Status}
		if _, ag, ok := coder.FindApp(got, coder.DefaultAgentAPISlug); ok {
			st.agent, st.lifecycle = ag.Status, ag.LifecycleState
		}
		return st
	}
	steps := []state{
		{coder.BuildStarting, "", ""},
		{coder.BuildRunning, coder.AgentConnecting, coder.LifecycleCreated},
		{coder.BuildRunning, coder.AgentConnected, coder.LifecycleReady},
	}
	for i, want := range steps {
		srv.Advance()
		if got := observe(); got != want {
			t.Fatalf("after %d steps: %+v, want %+v", i+1, got, want)
		}
	}

	// Found by ID too, and by name regardless of case (as Coder compares).
	if got, err := c.Workspace(ctx, ws.ID); err != nil || got.Name != "papi" {
		t.Fatalf("Workspace(%s) = %q, %v", ws.ID, got.Name, err)
	}
	if _, err := c.WorkspaceByOwnerAndName(ctx, "PAPI"); err != nil {
		t.Fatal(err)
	}

	// A build while one is active conflicts; stop, then delete.
	if _, err := c.CreateBuild(ctx, ws.ID, coder.TransitionStop); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateBuild(ctx, ws.ID, coder.TransitionDelete)
	wantKind(t, err, coder.KindConflict, "already active")
	srv.Advance()
	if got := observe(); got.build != coder.BuildStopping {
		t.Fatalf("stop in progress: %+v", got)
	}
	srv.Settle()
	if got := observe(); got.build != coder.BuildStopped || got.agent != "" {
		t.Fatalf("stopped: %+v", got)
	}
	b, err := c.CreateBuild(ctx, ws.ID, coder.TransitionDelete)
	if err != nil || b.Status != coder.BuildPending || b.Transition != coder.TransitionDelete || b.BuildNumber != 3 {
		t.Fatalf("delete build %+v, %v", b, err)
	}
	srv.Advance()
	if got := observe(); got.build != coder.BuildDeleting {
		t.Fatalf("deleting: %+v", got)
	}
	srv.Advance()
	_, err = c.WorkspaceByOwnerAndName(ctx, "papi")
	wantKind(t, err, coder.KindNotFound)
	_, err = c.Workspace(ctx, ws.ID)
	wantKind(t, err, coder.KindNotFound)
	list, err := c.ListWorkspaces(ctx, "")
	if err != nil || list.Count != 0 || len(list.Workspaces) != 0 {
		t.Fatalf("after delete the list is %+v, %v", list, err)
	}
}

func TestFailedBuild(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	srv.FailNextBuild("flaky")
	ws := createAgent(t, ctx, c, srv, "flaky")
	if ws.LatestBuild.Status != coder.BuildFailed || ws.LatestBuild.Job.Error == "" {
		t.Fatalf("build %q, job error %q", ws.LatestBuild.Status, ws.LatestBuild.Job.Error)
	}
	// Starting again works.
	if _, err := c.CreateBuild(ctx, ws.ID, coder.TransitionStart); err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	ws, _ = c.WorkspaceByOwnerAndName(ctx, "flaky")
	if ws.LatestBuild.Status != coder.BuildRunning {
		t.Fatalf("restarted build %q", ws.LatestBuild.Status)
	}
}

func TestCreateRefusals(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	createAgent(t, ctx, c, srv, "papi")
	orgs, _ := c.MyOrganizations(ctx)
	tmpls, _ := c.ListTemplates(ctx)
	before := srv.Requests(codertest.RouteCreateWorkspace)

	// Coder's name rule is checked before anything is sent.
	for _, bad := range []string{"", "agent-invalid@name", "-papi", "papi-", "pa--pi", "new", strings.Repeat("a", 33)} {
		_, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: bad, TemplateID: tmpls[0].ID})
		if ce := wantKind(t, err, coder.KindInvalid); ce.Field != "name" {
			t.Errorf("%q: field %q", bad, ce.Field)
		}
	}
	if n := srv.Requests(codertest.RouteCreateWorkspace); n != before {
		t.Errorf("%d create requests were sent for names the client should refuse", n-before)
	}

	// Coder's own refusals: a 400 validation names the field, a taken
	// name (any case) is a 409.
	_, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "sony", TemplateID: "6cbbea9f-08e0-46cd-bdba-410a5f3e5d5a"})
	if ce := wantKind(t, err, coder.KindInvalid, "template_id"); ce.Field != "template_id" || ce.Status != 400 {
		t.Errorf("unknown template: field %q status %d", ce.Field, ce.Status)
	}
	_, err = c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "sony", TemplateID: tmpls[0].ID,
		RichParameterValues: []coder.WorkspaceBuildParameter{{Name: "Prompt", Value: "x"}}})
	if ce := wantKind(t, err, coder.KindInvalid); ce.Field != "Prompt" {
		t.Errorf("unknown parameter: field %q", ce.Field)
	}
	_, err = c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "Papi", TemplateID: tmpls[0].ID})
	if ce := wantKind(t, err, coder.KindConflict, "already exists"); ce.Field != "name" {
		t.Errorf("taken name: field %q", ce.Field)
	}
}

func TestFakeServerRejectsBadNames(t *testing.T) {
	// The fake enforces the rule itself, with Coder's 400 body.
	srv := codertest.New(t)
	c := newClient(t, srv)
	orgs, _ := c.MyOrganizations(context.Background())
	tmpls, _ := c.ListTemplates(context.Background())
	body := `{"name":"agent-invalid@name","template_id":"` + tmpls[0].ID + `"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/organizations/"+orgs[0].ID+"/members/me/workspaces", strings.NewReader(body))
	req.Header.Set(coder.SessionTokenHeader, srv.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := new(strings.Builder)
	_, _ = io.Copy(buf, resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(buf.String(), `"field":"name"`) ||
		!strings.Contains(buf.String(), `Validation failed for tag \"workspace_name\"`) {
		t.Errorf("%d %s", resp.StatusCode, buf)
	}
}

func TestListWorkspacesQuery(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	web := srv.AddTemplate("web", "Web", "Reviewer")
	c := newClient(t, srv)
	createAgent(t, ctx, c, srv, "papi")
	createAgent(t, ctx, c, srv, "sony")
	orgs, _ := c.MyOrganizations(ctx)
	if _, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "webby", TemplateID: web.ID}); err != nil {
		t.Fatal(err)
	}
	srv.AddForeignWorkspace("bob", "bobs-agent")

	names := func(q string) string {
		t.Helper()
		r, err := c.ListWorkspaces(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(srv.LastQuery(), "owner:me") {
			t.Errorf("the client sent q=%q, not owner:me first", srv.LastQuery())
		}
		var ns []string
		for _, w := range r.Workspaces {
			ns = append(ns, w.Name)
		}
		if r.Count != len(ns) {
			t.Errorf("count %d for %d workspaces", r.Count, len(ns))
		}
		return strings.Join(ns, ",")
	}
	if got := names(""); got != "papi,sony,webby" {
		t.Errorf("own workspaces: %s (bob's must not be listed)", got)
	}
	if got := names("template:web"); got != "webby" {
		t.Errorf("template:web: %s", got)
	}
	if got := names("name:pap"); got != "papi" {
		t.Errorf("name:pap: %s", got)
	}
	_, err := c.ListWorkspaces(ctx, "owner:bob")
	if ce := wantKind(t, err, coder.KindInvalid, "owner:me"); ce.Field != "q" {
		t.Errorf("another owner: field %q", ce.Field)
	}
	_, err = c.ListWorkspaces(ctx, "colour:blue")
	if ce := wantKind(t, err, coder.KindInvalid); ce.Field != "q" {
		t.Errorf("bad query: field %q", ce.Field)
	}
}

func TestMalformedWorkspaceIDIsInvalid(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	_, err := c.Workspace(context.Background(), "non-existent-id")
	wantKind(t, err, coder.KindInvalid, "Invalid UUID")
	_, err = c.CreateBuild(context.Background(), "6cbbea9f-08e0-46cd-bdba-410a5f3e5d5a", coder.TransitionStop)
	wantKind(t, err, coder.KindNotFound)
	_, err = c.CreateBuild(context.Background(), "6cbbea9f-08e0-46cd-bdba-410a5f3e5d5a", "restart")
	if ce := wantKind(t, err, coder.KindInvalid); ce.Field != "transition" {
		t.Errorf("field %q", ce.Field)
	}
}

// agentAPIFlow drives the AgentAPI app of a ready workspace: a message
// makes it run (and the workspace's app status working), the clock makes
// it answer and go stable; an interrupt stops a run at once.
func agentAPIFlow(t *testing.T, srv *codertest.Server, subdomain bool) {
	ctx := context.Background()
	c := newClient(t, srv)
	ws := createAgent(t, ctx, c, srv, "papi")
	app, _, ok := coder.FindApp(ws, coder.DefaultAgentAPISlug)
	if !ok || app.Subdomain != subdomain {
		t.Fatalf("AgentAPI app %+v (found %v), want subdomain %v", app, ok, subdomain)
	}
	st, err := c.AgentStatus(ctx, app)
	if err != nil || st.Status != coder.AgentAPIStable {
		t.Fatalf("status %+v, %v", st, err)
	}
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "fix the flaky test"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.AgentStatus(ctx, app); st.Status != coder.AgentAPIRunning {
		t.Fatalf("after a message: %q", st.Status)
	}
	ws, _ = c.WorkspaceByOwnerAndName(ctx, "papi")
	if ws.LatestAppStatus == nil || ws.LatestAppStatus.State != coder.AppStateWorking {
		t.Fatalf("latest_app_status %+v", ws.LatestAppStatus)
	}
	srv.Advance()
	if st, _ := c.AgentStatus(ctx, app); st.Status != coder.AgentAPIStable {
		t.Fatalf("after the clock moved: %q", st.Status)
	}
	msgs, err := c.AgentMessages(ctx, app)
	// The spec (the prompt parameter) was the first exchange.
	if err != nil || len(msgs) != 4 || msgs[0].Content != "Keep the API tests green" ||
		msgs[2].Role != "user" || msgs[2].Content != "fix the flaky test" || msgs[3].Role != "agent" {
		t.Fatalf("messages %+v, %v", msgs, err)
	}
	ws, _ = c.WorkspaceByOwnerAndName(ctx, "papi")
	if ws.LatestAppStatus.State != coder.AppStateIdle {
		t.Fatalf("latest_app_status %q", ws.LatestAppStatus.State)
	}
	_, ag, _ := coder.FindApp(ws, coder.DefaultAgentAPISlug)
	// Twice (the spec, the message): working without a message (the
	// AgentAPI watcher), working with the agent's words, idle.
	var states []string
	for _, st := range ag.Apps[0].Statuses {
		states = append(states, st.State+":"+st.Message)
	}
	want := "working: working:working on: Keep the API tests green idle:done working: working:working on: fix the flaky test idle:done"
	if got := strings.Join(states, " "); got != want {
		t.Errorf("app statuses\n%s\nwant\n%s", got, want)
	}

	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "and another"}); err != nil {
		t.Fatal(err)
	}
	// The AgentAPI refuses a second message while the agent works.
	err = c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "and a third"})
	wantKind(t, err, coder.KindUnavailable, "waiting for user input")
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageRaw, Content: coder.Interrupt}); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.AgentStatus(ctx, app); st.Status != coder.AgentAPIStable {
		t.Fatalf("after an interrupt: %q", st.Status)
	}
}

func TestAgentAPIPathApp(t *testing.T) {
	srv := codertest.New(t)
	agentAPIFlow(t, srv, false)
	if srv.Requests(codertest.RouteAppStatus) == 0 {
		t.Error("the path app was not reached")
	}
}

func TestAgentAPISubdomainApp(t *testing.T) {
	srv := codertest.New(t, codertest.WithSubdomainApps())
	agentAPIFlow(t, srv, true)
	if srv.Requests(codertest.RouteAppHost) != 1 {
		t.Errorf("the app host was asked %d times, want once", srv.Requests(codertest.RouteAppHost))
	}
}

func TestAgentAPINotReady(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	app := coder.App{Owner: srv.Owner, Workspace: "ghost", Agent: codertest.AgentName, Slug: coder.DefaultAgentAPISlug}
	_, err := c.AgentStatus(ctx, app)
	wantKind(t, err, coder.KindNotFound)
	ws := createAgent(t, ctx, c, srv, "papi")
	if _, err := c.CreateBuild(ctx, ws.ID, coder.TransitionStop); err != nil {
		t.Fatal(err)
	}
	app.Workspace = "papi"
	_, err = c.AgentStatus(ctx, app)
	wantKind(t, err, coder.KindUnavailable, "502")
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	ws := createAgent(t, ctx, c, srv, "papi")
	app, _, _ := coder.FindApp(ws, coder.DefaultAgentAPISlug)

	srv.SetFault(codertest.RouteWorkspaces, codertest.Fault5xx)
	_, err := c.ListWorkspaces(ctx, "")
	wantKind(t, err, coder.KindUnavailable, srv.URL+"/api/v2/workspaces", "503", "check")
	srv.SetFault(codertest.RouteWorkspaces, codertest.NoFault)
	if _, err := c.ListWorkspaces(ctx, ""); err != nil {
		t.Fatalf("after the fault is cleared: %v", err)
	}

	cfg := srv.Config()
	cfg.Timeout = 200 * time.Millisecond
	quick, _ := coder.New(cfg)
	srv.SetFault(codertest.RouteTemplates, codertest.FaultTimeout)
	_, err = quick.ListTemplates(ctx) // the server never answers: only the timeout ends it
	wantKind(t, err, coder.KindUnavailable, "did not answer", srv.URL)

	// A redirect to /login is reported, not followed.
	srv.SetFault(codertest.RouteAppStatus, codertest.FaultLoginRedirect)
	_, err = c.AgentStatus(ctx, app)
	ce := wantKind(t, err, coder.KindNotAuthenticated, "login", "CODER_SESSION_TOKEN")
	if ce.Status != http.StatusSeeOther {
		t.Errorf("status %d", ce.Status)
	}
	srv.SetFault(codertest.RouteAppStatus, codertest.NoFault)

	// An app request without the token is redirected to /login by the fake
	// (as by Coder); the client reports it the same way.
	other := srv.Config()
	other.Token = "expired"
	stale, _ := coder.New(other)
	_, err = stale.AgentStatus(ctx, app)
	wantKind(t, err, coder.KindNotAuthenticated)

	srv.SetFault(codertest.RouteAppMessage, codertest.Fault5xx)
	err = c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "hi"})
	wantKind(t, err, coder.KindUnavailable, "503")
}

func TestUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	c, err := coder.New(coder.Config{URL: url, Token: "t", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListTemplates(context.Background())
	ce := wantKind(t, err, coder.KindUnavailable, "cannot reach Coder at "+url, "CODER_URL")
	if ce.Kind.Domain() != agenterr.Unavailable || !errors.Is(err, coder.ErrUnavailable) {
		t.Errorf("kind %s", ce.Kind.Domain())
	}
}
