package coder_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

func readyWorkspace(t *testing.T, srv *codertest.Server, c *coder.Client, name string) coder.Workspace {
	t.Helper()
	if _, err := srv.AddReadyWorkspace("me", name, "agents", "Coder"); err != nil {
		t.Fatal(err)
	}
	return reread(t, c, name)
}

// reread fetches the workspace as the fleet would before collecting.
func reread(t *testing.T, c *coder.Client, name string) coder.Workspace {
	t.Helper()
	ws, err := c.WorkspaceByOwnerAndName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func agentItem(key, display, value, errText string) coder.WorkspaceAgentMetadata {
	return coder.WorkspaceAgentMetadata{
		Description: coder.WorkspaceAgentMetadataDescription{DisplayName: display, Key: key, Script: "echo", Interval: 10, Timeout: 1},
		Result:      coder.WorkspaceAgentMetadataResult{Value: value, Error: errText},
	}
}

func value(f metadata.Field) string {
	if f.Value == nil {
		return "<nil>"
	}
	return *f.Value
}

func errText(f metadata.Field) string {
	if f.Error == nil {
		return ""
	}
	return *f.Error
}

// TestMetadataFromCoderAgentMetadata: a template's coder_agent metadata
// blocks become fields (key → name, display_name → description), every one
// listed, in Coder's order; a script that failed or has not run yet is
// that field's error.
func TestMetadataFromCoderAgentMetadata(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	ws := readyWorkspace(t, srv, c, "papi")
	notRun := agentItem("disk", "Disk usage", "", "")
	if err := srv.SetAgentMetadata("papi",
		agentItem("pr", "Pull request", " 812\n", ""),
		agentItem("ci", "", "", "exit status 1"),
		notRun,
		agentItem("branch", "Branch", "fix/login", ""),
	); err != nil {
		t.Fatal(err)
	}
	md := c.CollectMetadata(context.Background(), ws, coder.MetadataOptions{}) // returns only if the client closes the stream after the first event
	if md.Err != "" || md.Count() != 4 || strings.Join(md.Names, ",") != "pr,ci,disk,branch" {
		t.Fatalf("got %+v", md)
	}
	pr := md.Fields["pr"]
	if value(pr) != "812" || pr.Schema.Description != "Pull request" || !pr.Schema.IncludeInList || pr.Error != nil {
		t.Errorf("pr: %+v", pr)
	}
	if ci := md.Fields["ci"]; ci.Value != nil || errText(ci) != "exit status 1" || ci.Schema.Description != "No description" {
		t.Errorf("ci: %+v", ci)
	}
	if d := md.Fields["disk"]; d.Value != nil || !strings.Contains(errText(d), "not collected yet") {
		t.Errorf("disk: %+v", d)
	}
	if lv := md.ListValues(); len(lv) != 4 || *lv["branch"] != "fix/login" {
		t.Errorf("list values %v", lv)
	}
}

// metadataAppHandler is a workspace's metadata app: the real
// metadata.Handler over a Taskfile when go-task is installed (a field that
// never ends is cut by its field timeout, appFieldTimeout), else canned JSON of the same
// shape. real says which.
func metadataAppHandler(t *testing.T) (h http.Handler, real bool) {
	t.Helper()
	bin := filepath.Join(e2etools.GoToolsDir(), "task")
	if _, err := exec.LookPath(bin); err != nil {
		if os.Getenv(e2etools.EnvE2E) == "1" {
			t.Fatalf("go-task is not installed (%v) and %s=1", err, e2etools.EnvE2E)
		}
		t.Logf("go-task is not installed (%v): the metadata app serves canned JSON", err)
		v, e := "812", "timed out after 1s"
		return codertest.StaticMetadata(metadata.Metadata{
			Fields: map[string]metadata.Field{
				"pull_request": {Value: &v, Schema: metadata.Schema{Description: "The PR.", IncludeInList: true}},
				"slow":         {Error: &e, Schema: metadata.Schema{Description: "Never ends."}},
			},
			Names: []string{"pull_request", "slow"}, Taskfile: "/home/coder/project/Taskfile.yml",
		}), false
	}
	dir := t.TempDir()
	taskfile := `version: '3'

tasks:
  pull_request:
    desc: The PR.
    meta: { include_in_list: true }
    cmds: [echo 812]
  slow:
    desc: Never ends.
    meta: {}
    cmds: [sleep 60]
  build:
    cmds: [go build ./...]
`
	if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte(taskfile), 0o644); err != nil {
		t.Fatal(err)
	}
	// 3 s: enough for go-task to start on a loaded machine, short enough
	// to show that the hanging field is cut.
	return metadata.Handler(metadata.NewCollector(metadata.Options{TaskBinary: bin, Timeout: appFieldTimeout}), dir), true
}

const appFieldTimeout = 3 * time.Second

func checkAppMetadata(t *testing.T, md metadata.Metadata, real bool) {
	t.Helper()
	if md.Err != "" || strings.Join(md.Names, ",") != "pull_request,slow" {
		t.Fatalf("got %+v", md)
	}
	if pr := md.Fields["pull_request"]; value(pr) != "812" || !pr.Schema.IncludeInList || pr.Schema.Description != "The PR." {
		t.Errorf("pull_request: %+v (error %q)", pr, errText(pr))
	}
	if slow := md.Fields["slow"]; slow.Value != nil || slow.Error == nil || slow.Schema.IncludeInList {
		t.Errorf("slow: %+v", slow)
	}
	if real && !strings.HasSuffix(md.Taskfile, "Taskfile.yml") {
		t.Errorf("taskfile %q", md.Taskfile)
	}
}

// TestMetadataFromApp: without agent metadata the fleet asks the metadata
// app (agentinfra metadata serve) through the app proxy with the session
// token, for path and subdomain apps alike; a field that hangs costs its
// field timeout, not the request.
func TestMetadataFromApp(t *testing.T) {
	for _, sub := range []bool{false, true} {
		t.Run(map[bool]string{false: "path", true: "subdomain"}[sub], func(t *testing.T) {
			var opts []codertest.Option
			if sub {
				opts = append(opts, codertest.WithSubdomainApps())
			}
			srv := codertest.New(t, opts...)
			c := newClient(t, srv)
			readyWorkspace(t, srv, c, "papi")
			h, real := metadataAppHandler(t)
			if err := srv.SetMetadataApp("papi", h); err != nil {
				t.Fatal(err)
			}
			ws := reread(t, c, "papi")
			if app, _, ok := coder.FindApp(ws, coder.DefaultMetadataAppSlug); !ok || app.Subdomain != sub {
				t.Fatalf("the workspace lists no metadata app of the right kind: %+v", app)
			}
			md := c.CollectMetadata(context.Background(), ws, coder.MetadataOptions{})
			checkAppMetadata(t, md, real)
			if n := srv.Requests(codertest.RouteWatchMetadata); n != 1 {
				t.Errorf("agent metadata asked %d times, want 1 (first)", n)
			}
		})
	}
}

// TestMetadataPrefersAgentMetadata: with both, Coder's agent metadata wins
// and the app is not asked.
func TestMetadataPrefersAgentMetadata(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	readyWorkspace(t, srv, c, "papi")
	if err := srv.SetMetadataApp("papi", codertest.StaticMetadata(metadata.Metadata{})); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetAgentMetadata("papi", agentItem("cpu", "CPU", "12%", "")); err != nil {
		t.Fatal(err)
	}
	md := c.CollectMetadata(context.Background(), reread(t, c, "papi"), coder.MetadataOptions{})
	if md.Count() != 1 || value(md.Fields["cpu"]) != "12%" {
		t.Fatalf("got %+v", md)
	}
	if n := srv.Requests(codertest.RouteMetadataApp); n != 0 {
		t.Errorf("the app was asked %d times", n)
	}
}

// TestNoMetadata: a workspace with neither source, or not started yet, has
// no metadata and no error; one whose agent is not connected says so.
func TestNoMetadata(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	ctx := context.Background()
	md := c.CollectMetadata(ctx, readyWorkspace(t, srv, c, "papi"), coder.MetadataOptions{})
	if md.Count() != 0 || md.Err != "" || md.Fields == nil {
		t.Errorf("no source: %+v", md)
	}
	tmpls, err := c.ListTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orgs, err := c.MyOrganizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sony, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "sony", TemplateID: tmpls[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if md := c.CollectMetadata(ctx, sony, coder.MetadataOptions{}); md.Count() != 0 || md.Err != "" { // pending: no agent yet
		t.Errorf("pending: %+v", md)
	}
	for i := 0; i < 2; i++ { // pending → running → succeeded, agent connecting
		srv.Advance()
	}
	md = c.CollectMetadata(ctx, reread(t, c, "sony"), coder.MetadataOptions{})
	if md.Count() != 0 || !strings.Contains(md.Err, "connecting") {
		t.Errorf("connecting: %+v", md)
	}
}

// TestMetadataFailuresArePerAgent: a failing source is that agent's error
// (what failed and what to check), never a failed call, and never slower
// than the timeout; the other agents keep their metadata.
func TestMetadataFailuresArePerAgent(t *testing.T) {
	cases := []struct {
		name     string
		route    string
		fault    codertest.Fault
		mentions string
	}{
		{"app 5xx", codertest.RouteMetadataApp, codertest.Fault5xx, "503"},
		{"app hangs", codertest.RouteMetadataApp, codertest.FaultTimeout, "within 500ms: the metadata app agentinfra-metadata did not answer"},
		{"app redirects to login", codertest.RouteMetadataApp, codertest.FaultLoginRedirect, "CODER_SESSION_TOKEN"},
		{"watch 5xx", codertest.RouteWatchMetadata, codertest.Fault5xx, "agent metadata"},
		{"watch hangs", codertest.RouteWatchMetadata, codertest.FaultTimeout, "within 500ms: Coder's agent metadata stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := codertest.New(t)
			c := newClient(t, srv)
			readyWorkspace(t, srv, c, "papi") // agent metadata
			readyWorkspace(t, srv, c, "sony") // the app only
			if err := srv.SetAgentMetadata("papi", agentItem("cpu", "CPU", "12%", "")); err != nil {
				t.Fatal(err)
			}
			v := "812"
			if err := srv.SetMetadataApp("sony", codertest.StaticMetadata(metadata.Metadata{
				Fields: map[string]metadata.Field{"pr": {Value: &v}}, Names: []string{"pr"}})); err != nil {
				t.Fatal(err)
			}
			srv.SetFault(tc.route, tc.fault)
			wss := []coder.Workspace{reread(t, c, "papi"), reread(t, c, "sony")}
			got := c.CollectMetadataAll(context.Background(), wss, coder.MetadataOptions{Timeout: 500 * time.Millisecond})
			papi, sony := got[0], got[1]
			if tc.route == codertest.RouteMetadataApp {
				if papi.Err != "" || value(papi.Fields["cpu"]) != "12%" {
					t.Errorf("papi (agent metadata) suffered from the app's fault: %+v", papi)
				}
				if sony.Count() != 0 || !strings.Contains(sony.Err, tc.mentions) {
					t.Errorf("sony: %+v, want an error mentioning %q", sony, tc.mentions)
				}
				return
			}
			if papi.Count() != 0 || !strings.Contains(papi.Err, tc.mentions) {
				t.Errorf("papi: %+v, want an error mentioning %q", papi, tc.mentions)
			}
			if tc.fault == codertest.Fault5xx && (sony.Err != "" || value(sony.Fields["pr"]) != "812") {
				t.Errorf("sony's app should answer when the agent metadata fails: %+v", sony)
			}
		})
	}
}

// TestAppAnswerIsTidied: an app whose names and fields disagree still gives
// every field once.
func TestAppAnswerIsTidied(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	readyWorkspace(t, srv, c, "papi")
	a, b := "1", "2"
	if err := srv.SetMetadataApp("papi", codertest.StaticMetadata(metadata.Metadata{
		Fields: map[string]metadata.Field{"b": {Value: &b}, "a": {Value: &a}},
		Names:  []string{"b", "ghost", "b"}})); err != nil {
		t.Fatal(err)
	}
	md := c.CollectMetadata(context.Background(), reread(t, c, "papi"), coder.MetadataOptions{})
	if strings.Join(md.Names, ",") != "b,a" || md.Count() != 2 {
		t.Fatalf("got %+v", md)
	}
}

// TestMetadataAppListRunsOnlyTheListedFields: list_agents asks the app for
// the listed fields only (?fields=list), so a slow field it does not show
// costs it nothing; show asks for every field.
func TestMetadataAppListRunsOnlyTheListedFields(t *testing.T) {
	srv := codertest.New(t)
	c := newClient(t, srv)
	readyWorkspace(t, srv, c, "papi")
	h, real := metadataAppHandler(t)
	var queries []string
	var mu sync.Mutex
	err := srv.SetMetadataApp("papi", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	ws := reread(t, c, "papi")
	md := c.CollectMetadata(context.Background(), ws, coder.MetadataOptions{Scope: metadata.ListFields})
	if value(md.Fields["pull_request"]) != "812" || md.Count() != 2 {
		t.Fatalf("list: %+v", md)
	}
	if real && (!md.ListOnly || md.Fields["slow"].Error != nil) {
		t.Errorf("list: the slow field ran: %+v", md.Fields["slow"])
	}
	c.CollectMetadata(context.Background(), ws, coder.MetadataOptions{})
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(queries, " / ") != "fields=list / " {
		t.Errorf("the app was asked %q, want the list's fields=list and then everything", queries)
	}
}
