package codertest_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// TestStartOutsideATest: Start serves without a testing.TB, its real clock
// brings a new workspace to ready on its own, and Close frees a request
// that would hang forever and stops the server.
func TestStartOutsideATest(t *testing.T) {
	srv, err := codertest.Start(codertest.WithToken("T"), codertest.WithAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := coder.New(coder.Config{URL: srv.URL, Token: "T", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	orgs, err := c.MyOrganizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tmpls, err := c.ListTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, orgs[0].ID, coder.CreateWorkspaceRequest{Name: "papi", TemplateID: tmpls[0].ID}); err != nil {
		t.Fatal(err)
	}
	srv.RunClock(10 * time.Millisecond)
	poll.EventuallyNil(t, func() error {
		ws, err := c.WorkspaceByOwnerAndName(ctx, "papi")
		if err != nil {
			t.Fatal(err)
		}
		if ws.LatestBuild.Status != coder.BuildRunning || len(ws.LatestBuild.Resources) == 0 ||
			ws.LatestBuild.Resources[0].Agents[0].LifecycleState != coder.LifecycleReady {
			return fmt.Errorf("the clock did not bring papi to ready: %s", ws.LatestBuild.Status)
		}
		return nil
	})
	srv.SetFault(codertest.RouteTemplates, codertest.FaultTimeout)
	hung := make(chan error, 1)
	go func() { _, err := c.ListTemplates(ctx); hung <- err }()
	time.Sleep(50 * time.Millisecond)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the hanging request")
	}
	if err := <-hung; err == nil {
		t.Error("the hanging request succeeded")
	}
	if _, err := c.ListTemplates(ctx); err == nil {
		t.Error("the server still answers after Close")
	}
	srv.Close() // twice is harmless
}

// TestWatchMetadataStream: the agent metadata arrives as Coder sends it,
// server-sent events (a ping, then a data event) on a stream that stays
// open.
func TestWatchMetadataStream(t *testing.T) {
	srv := codertest.New(t)
	ws, err := srv.AddReadyWorkspace("me", "papi", "agents", "Coder")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.SetAgentMetadata("papi", coder.WorkspaceAgentMetadata{
		Description: coder.WorkspaceAgentMetadataDescription{Key: "cpu", DisplayName: "CPU", Interval: 1, Timeout: 1},
		Result:      coder.WorkspaceAgentMetadataResult{Value: "3%"}}); err != nil {
		t.Fatal(err)
	}
	agentID := ws.LatestBuild.Resources[0].Agents[0].ID
	r := openStream(t, srv, srv.URL+"/api/v2/workspaceagents/"+agentID+"/watch-metadata")
	var got []string
	for len(got) < 5 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, strings.TrimRight(line, "\n"))
	}
	if got[0] != "event: ping" || got[1] != "" || got[2] != "event: data" ||
		!strings.HasPrefix(got[3], `data: [{"result":{"collected_at":"2026-01-05T09:00:00Z","age":0,"value":"3%","error":""},"description":{"display_name":"CPU","key":"cpu"`) || got[4] != "" {
		t.Errorf("stream:\n%s", strings.Join(got, "\n"))
	}
}

// openStream opens a server-sent event stream of the fake with the session
// token; it is closed when the test ends.
func openStream(t *testing.T, srv *codertest.Server, url string) *bufio.Reader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set(coder.SessionTokenHeader, srv.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewReader(resp.Body)
}
