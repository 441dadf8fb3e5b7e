package coder

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recording is one file of ../shared/coder-api: a real Coder v2.27.1 answer.
type recording struct {
	Method       string             `json:"method"`
	URI          string             `json:"uri"`
	Status       struct{ Code int } `json:"status"`
	RequestBody  json.RawMessage    `json:"request_body"`
	ResponseBody json.RawMessage    `json:"response_body"`
}

// recordingsDir is <repo>/../shared/coder-api, where <repo> is this
// checkout or, in a git worktree, the main checkout; the test skips when
// neither has it (a newcomer's fresh clone).
func recordingsDir(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	candidates := []string{filepath.Join(repo, "..", "shared", "coder-api")}
	if out, err := exec.Command("git", "-C", repo, "rev-parse", "--path-format=absolute", "--git-common-dir").Output(); err == nil {
		main := filepath.Dir(strings.TrimSpace(string(out))) // <main>/.git → <main>
		candidates = append(candidates, filepath.Join(main, "..", "shared", "coder-api"))
	}
	for _, dir := range candidates {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	t.Skipf("no recorded Coder responses at %s (absent on a fresh clone)", strings.Join(candidates, " or "))
	return ""
}

func nonEmpty(t *testing.T, what, v string) {
	t.Helper()
	if strings.TrimSpace(v) == "" {
		t.Errorf("%s is empty after decoding", what)
	}
}

func checkWorkspace(t *testing.T, ws Workspace) {
	t.Helper()
	nonEmpty(t, "workspace id", ws.ID)
	nonEmpty(t, "workspace name", ws.Name)
	nonEmpty(t, "workspace owner_name", ws.OwnerName)
	nonEmpty(t, "workspace template_id", ws.TemplateID)
	nonEmpty(t, "workspace template_name", ws.TemplateName)
	nonEmpty(t, "workspace template_display_name", ws.TemplateDisplayName)
	nonEmpty(t, "workspace organization_id", ws.OrganizationID)
	if ws.CreatedAt.IsZero() {
		t.Errorf("workspace %s: created_at is zero", ws.Name)
	}
	checkBuild(t, ws.LatestBuild)
	for _, r := range ws.LatestBuild.Resources {
		for _, ag := range r.Agents {
			nonEmpty(t, "agent name", ag.Name)
			nonEmpty(t, "agent status", ag.Status)
			nonEmpty(t, "agent lifecycle_state", ag.LifecycleState)
			for _, app := range ag.Apps {
				nonEmpty(t, "app slug", app.Slug)
				for _, st := range app.Statuses {
					nonEmpty(t, "app status state", st.State)
					if st.CreatedAt.IsZero() {
						t.Errorf("app %s: a status has no created_at", app.Slug)
					}
				}
			}
		}
	}
}

func checkBuild(t *testing.T, b WorkspaceBuild) {
	t.Helper()
	nonEmpty(t, "build id", b.ID)
	nonEmpty(t, "build status", b.Status)
	nonEmpty(t, "build transition", b.Transition)
	nonEmpty(t, "build job status", b.Job.Status)
	nonEmpty(t, "build workspace_id", b.WorkspaceID)
	if b.BuildNumber == 0 {
		t.Error("build_number is 0")
	}
}

// TestContractRecordedResponses decodes every recorded response into the
// client's structs and checks that the fields the fleet reads arrive (a
// wrong JSON name, say "id" for a preset's "ID", decodes to "" silently).
func TestContractRecordedResponses(t *testing.T) {
	dir := recordingsDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s: %v", dir, err)
	}
	checks := map[string]func(t *testing.T, body []byte, rec recording){
		"GET_api_v2_organizations_200.json":          checkOrganizations,
		"GET_api_v2_users_me_organizations_200.json": checkOrganizations,
		"GET_api_v2_templates_200.json": func(t *testing.T, body []byte, _ recording) {
			var ts []Template
			decode(t, body, &ts)
			if len(ts) == 0 {
				t.Fatal("no templates")
			}
			for _, tp := range ts {
				checkTemplate(t, tp)
			}
		},
		"GET_api_v2_templates_ID_200.json": func(t *testing.T, body []byte, _ recording) {
			var tp Template
			decode(t, body, &tp)
			checkTemplate(t, tp)
		},
		"GET_api_v2_templateversions_ID_presets_200.json": func(t *testing.T, body []byte, _ recording) {
			var ps []Preset
			decode(t, body, &ps)
			if len(ps) != 3 {
				t.Fatalf("%d presets, the recording has 3", len(ps))
			}
			defaults := 0
			for _, p := range ps {
				nonEmpty(t, "preset ID", p.ID)
				nonEmpty(t, "preset Name", p.Name)
				if len(p.Parameters) == 0 || p.Parameters[0].Name == "" || p.Parameters[0].Value == "" {
					t.Errorf("preset %s: parameters lost: %+v", p.Name, p.Parameters)
				}
				if p.Default {
					defaults++
				}
			}
			if ps[0].Name != "Coder" || defaults != 1 {
				t.Errorf("presets out of Coder's order or default lost: first %q, %d defaults", ps[0].Name, defaults)
			}
		},
		"GET_api_v2_templateversions_ID_rich_parameters_200.json": func(t *testing.T, body []byte, _ recording) {
			var ps []TemplateVersionParameter
			decode(t, body, &ps)
			found := false
			for _, p := range ps {
				nonEmpty(t, "parameter name", p.Name)
				nonEmpty(t, "parameter type", p.Type)
				found = found || p.Name == "AI Prompt"
			}
			if !found {
				t.Error(`the "AI Prompt" parameter is missing`)
			}
		},
		"GET_api_v2_workspaces_200.json": func(t *testing.T, body []byte, _ recording) {
			var r WorkspacesResponse
			decode(t, body, &r)
			if r.Count == 0 || r.Count != len(r.Workspaces) {
				t.Fatalf("count %d, %d workspaces", r.Count, len(r.Workspaces))
			}
			for _, ws := range r.Workspaces {
				checkWorkspace(t, ws)
				// Names Coder accepted must pass our copy of its rule
				// ("Henk" shows upper case is allowed).
				if err := ValidateWorkspaceName(ws.Name); err != nil {
					t.Errorf("Coder has a workspace %q that ValidateWorkspaceName refuses: %v", ws.Name, err)
				}
				if ws.LatestBuild.TemplateVersionPresetID == nil || *ws.LatestBuild.TemplateVersionPresetID == "" {
					t.Errorf("workspace %s: template_version_preset_id lost", ws.Name)
				}
				if ws.LatestAppStatus == nil || ws.LatestAppStatus.State == "" {
					t.Errorf("workspace %s: latest_app_status.state lost", ws.Name)
				}
			}
		},
		"GET_api_v2_workspaces_ID_200.json": func(t *testing.T, body []byte, _ recording) {
			var ws Workspace
			decode(t, body, &ws)
			checkWorkspace(t, ws)
			if ws.LatestAppStatus == nil || ws.LatestAppStatus.State != AppStateIdle {
				t.Errorf("latest_app_status = %+v, the recording says idle", ws.LatestAppStatus)
			}
			app, ag, ok := FindApp(ws, "ccw")
			if !ok || ag.Status != AgentConnected || ag.LifecycleState != LifecycleReady || app.Subdomain {
				t.Errorf("the AgentAPI app ccw of agent main (connected, ready, path app) not found: %+v %+v", app, ag)
			}
			if app.Owner != "mvgijssel" || app.Workspace != "test-recording-agent" || app.Agent != "main" {
				t.Errorf("FindApp = %+v", app)
			}
			var statuses int
			for _, r := range ws.LatestBuild.Resources {
				for _, a := range r.Agents {
					for _, ap := range a.Apps {
						statuses += len(ap.Statuses)
					}
				}
			}
			if statuses != 3 {
				t.Errorf("%d app statuses, the recording has 3", statuses)
			}
		},
		"POST_api_v2_organizations_ID_members_me_workspaces_201.json": func(t *testing.T, body []byte, rec recording) {
			checkRequestRoundTrips(t, rec.RequestBody, &CreateWorkspaceRequest{})
			var ws Workspace
			decode(t, body, &ws)
			checkWorkspace(t, ws)
			if ws.LatestBuild.Status != BuildPending || ws.LatestAppStatus != nil {
				t.Errorf("a new workspace: build %q, app status %+v; the recording has pending and null", ws.LatestBuild.Status, ws.LatestAppStatus)
			}
			if ws.LatestBuild.TemplateVersionPresetID == nil || *ws.LatestBuild.TemplateVersionPresetID == "" {
				t.Error("template_version_preset_id lost")
			}
		},
		"POST_api_v2_workspaces_ID_builds_201.json": func(t *testing.T, body []byte, rec recording) {
			checkRequestRoundTrips(t, rec.RequestBody, &CreateWorkspaceBuildRequest{})
			var b WorkspaceBuild
			decode(t, body, &b)
			checkBuild(t, b)
			if b.Transition != TransitionDelete || b.Status != BuildPending {
				t.Errorf("build %q/%q, the recording has delete/pending", b.Transition, b.Status)
			}
		},
		"GET_api_v2_workspacebuilds_ID_resources_200.json": func(t *testing.T, body []byte, _ recording) {
			var rs []WorkspaceResource
			decode(t, body, &rs)
			agents := 0
			for _, r := range rs {
				nonEmpty(t, "resource name", r.Name)
				for _, a := range r.Agents {
					agents++
					nonEmpty(t, "agent name", a.Name)
					nonEmpty(t, "agent status", a.Status)
					nonEmpty(t, "agent lifecycle_state", a.LifecycleState)
				}
			}
			if agents == 0 {
				t.Error("no agent decoded")
			}
		},
		"POST_api_v2_organizations_ID_members_me_workspaces_400.json": func(t *testing.T, body []byte, rec recording) {
			e := checkErrorBody(t, body, rec)
			if e.Field != "name" || len(e.Response.Validations) != 1 || !strings.Contains(e.Error(), "workspace_name") {
				t.Errorf("the validation of the name is lost: %+v", e)
			}
		},
		"GET_api_v2_workspaces_non_existent_id_400.json": func(t *testing.T, body []byte, rec recording) {
			e := checkErrorBody(t, body, rec)
			nonEmpty(t, "detail", e.Response.Detail)
		},
		"GET_api_v2_workspacebuilds_ID_resources_400.json": func(t *testing.T, body []byte, rec recording) { checkErrorBody(t, body, rec) },
		"GET_api_experimental_tasks_USER_ID_400.json":      func(t *testing.T, body []byte, rec recording) { checkErrorBody(t, body, rec) },
		"GET_api_experimental_tasks_USER_ID_logs_400.json": func(t *testing.T, body []byte, rec recording) { checkErrorBody(t, body, rec) },
		"GET_atOWNER_WS_apps_fleet_mcp_pr_url_303.json": func(t *testing.T, body []byte, rec recording) {
			var html string
			decode(t, body, &html)
			loc := strings.TrimSuffix(strings.SplitN(strings.SplitN(html, `href="`, 2)[1], `"`, 2)[0], "")
			e := statusError(rec.Method, rec.URI, rec.Status.Code, nil, loc)
			if e.Kind != KindNotAuthenticated {
				t.Errorf("a 303 to %s is %v, want not authenticated", loc, e.Kind)
			}
		},
	}
	// The experimental Tasks endpoints are gone from current Coder
	// releases; the client has no structs for their successes on purpose.
	deprecated := map[string]bool{
		"GET_api_experimental_tasks_USER_ID_200.json":       true,
		"GET_api_experimental_tasks_USER_ID_logs_200.json":  true,
		"POST_api_experimental_tasks_USER_ID_send_204.json": true,
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rec recording
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatalf("not a recording: %v", err)
			}
			if deprecated[name] {
				t.Skip("experimental Tasks API: not used (removed from current Coder)")
			}
			check, ok := checks[name]
			if !ok {
				t.Fatalf("a new recording (%s %s %d): add its struct and checks here", rec.Method, rec.URI, rec.Status.Code)
			}
			check(t, rec.ResponseBody, rec)
		})
	}
}

// decode decodes body into v and checks that v encodes only names the
// recording has, in the same case: encoding/json matches names
// case-insensitively on decode, so a preset's "id" would read "ID" fine
// yet make the fake server answer with the wrong name.
func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decoding into %T: %v", v, err)
	}
	ours, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var recorded, encoded any
	_ = json.Unmarshal(body, &recorded)
	_ = json.Unmarshal(ours, &encoded)
	sameNames(t, "", recorded, encoded)
}

func sameNames(t *testing.T, at string, recorded, ours any) {
	t.Helper()
	switch o := ours.(type) {
	case map[string]any:
		r, ok := recorded.(map[string]any)
		if !ok {
			return // null in the recording
		}
		for k, v := range o {
			rv, ok := r[k]
			if !ok {
				t.Errorf("the client's struct encodes %s.%s, which the recording does not have (check the JSON name and its case)", at, k)
				continue
			}
			sameNames(t, at+"."+k, rv, v)
		}
	case []any:
		r, _ := recorded.([]any)
		for i := range o {
			if i < len(r) {
				sameNames(t, at+"[]", r[i], o[i])
			}
		}
	}
}

func checkOrganizations(t *testing.T, body []byte, _ recording) {
	var os []Organization
	decode(t, body, &os)
	if len(os) == 0 {
		t.Fatal("no organizations")
	}
	nonEmpty(t, "organization id", os[0].ID)
	nonEmpty(t, "organization name", os[0].Name)
	if !os[0].IsDefault {
		t.Error("is_default lost")
	}
}

func checkTemplate(t *testing.T, tp Template) {
	t.Helper()
	nonEmpty(t, "template id", tp.ID)
	nonEmpty(t, "template name", tp.Name)
	nonEmpty(t, "template display_name", tp.DisplayName)
	nonEmpty(t, "template active_version_id", tp.ActiveVersionID)
	nonEmpty(t, "template organization_id", tp.OrganizationID)
}

// checkErrorBody decodes an error answer the way the client does and
// checks it becomes the right kind with Coder's message kept.
func checkErrorBody(t *testing.T, body []byte, rec recording) *Error {
	t.Helper()
	var r Response
	decode(t, body, &r)
	nonEmpty(t, "message", r.Message)
	e := statusError(rec.Method, rec.URI, rec.Status.Code, &r, "")
	if want := KindInvalid; rec.Status.Code == 400 && e.Kind != want {
		t.Errorf("a %d is %v, want %v", rec.Status.Code, e.Kind, want)
	}
	if !strings.Contains(e.Error(), r.Message) {
		t.Errorf("the error %q drops Coder's message %q", e.Error(), r.Message)
	}
	return e
}

// checkRequestRoundTrips checks that a recorded request body decodes into
// the client's request struct with no field left over and encodes back to
// the same JSON: the client sends what Coder was sent.
func checkRequestRoundTrips(t *testing.T, recorded []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(recorded))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("the recorded request does not fit %T: %v", v, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(recorded, &a)
	_ = json.Unmarshal(again, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%T encodes as %s, Coder was sent %s", v, again, recorded)
	}
}
