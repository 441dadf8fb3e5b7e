package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// TestFakeCoderServesFiftyWorkspaces: started as by hand, it prints the
// two variables and answers owner:me with the user's 50 workspaces, ready,
// spread over the templates and presets, and the token-less request with 401.
func TestFakeCoderServesFiftyWorkspaces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--token", "T", "--templates", "2", "--workspaces", "50", "--agent-metadata"}, outW, io.Discard)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	vars := map[string]string{}
	for len(vars) < 2 && lines.Scan() {
		k, v, _ := strings.Cut(lines.Text(), "=")
		vars[k] = v
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if vars["CODER_SESSION_TOKEN"] != "T" || !strings.HasPrefix(vars["CODER_URL"], "http://127.0.0.1:") {
		t.Fatalf("printed %v", vars)
	}
	get := func(q, token string) (int, coder.WorkspacesResponse) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, vars["CODER_URL"]+"/api/v2/workspaces?q="+url.QueryEscape(q), nil)
		if token != "" {
			req.Header.Set(coder.SessionTokenHeader, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r coder.WorkspacesResponse
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r
	}
	status, mine := get("owner:me", "T")
	if status != 200 || mine.Count != 50 || len(mine.Workspaces) != 50 {
		t.Fatalf("owner:me: %d, count %d", status, mine.Count)
	}
	templates, presets := map[string]bool{}, map[string]bool{}
	for _, ws := range mine.Workspaces {
		ag := ws.LatestBuild.Resources[0].Agents[0]
		if ws.LatestBuild.Status != coder.BuildRunning || ag.LifecycleState != coder.LifecycleReady || ws.LatestBuild.TemplateVersionPresetID == nil {
			t.Fatalf("%s is not ready: build %s, agent %s", ws.Name, ws.LatestBuild.Status, ag.LifecycleState)
		}
		templates[ws.TemplateName], presets[*ws.LatestBuild.TemplateVersionPresetID] = true, true
	}
	if len(templates) != 2 || len(presets) != 4 {
		t.Errorf("templates %v, presets %d: the workspaces should spread over both", templates, len(presets))
	}
	if _, all := get("", "T"); all.Count != 52 {
		t.Errorf("everyone's: %d, want 50 + 2 of bob", all.Count)
	}
	if status, _ := get("owner:me", ""); status != http.StatusUnauthorized {
		t.Errorf("without the token: %d", status)
	}
	c, err := coder.New(coder.Config{URL: vars["CODER_URL"], Token: "T"})
	if err != nil {
		t.Fatal(err)
	}
	md := c.CollectMetadata(ctx, mine.Workspaces[0], coder.MetadataOptions{})
	if md.Count() != 2 || md.Err != "" {
		t.Errorf("agent metadata: %+v", md)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fakecoder did not stop when interrupted")
	}
}

func TestFakeCoderRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{{"--addr", "0.0.0.0:0"}, {"--templates", "0"}, {"extra"}} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
