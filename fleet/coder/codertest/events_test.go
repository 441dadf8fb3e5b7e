package codertest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// TestAppEventsWireFormat: GET events speaks the AgentAPI's own format
// (huma's server-sent events: an event line, one data line of JSON with
// the AgentAPI's field names, a blank line) on a stream that stays open,
// and Close ends it.
func TestAppEventsWireFormat(t *testing.T) {
	srv := codertest.New(t)
	if _, err := srv.AddReadyWorkspace("me", "papi", "agents", "Coder"); err != nil {
		t.Fatal(err)
	}
	base := srv.URL + "/@" + srv.Owner + "/papi." + codertest.AgentName + "/apps/" + coder.DefaultAgentAPISlug + "/"
	r := openStream(t, srv, base+"events")
	lines := func(n int) string {
		t.Helper()
		var got []string
		for len(got) < n {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("after %q: %v", got, err)
			}
			got = append(got, strings.TrimSuffix(line, "\n"))
		}
		return strings.Join(got, "\n")
	}
	// A workspace that has been up a while: an empty conversation, stable.
	if got, want := lines(3), "event: status_change\ndata: {\"status\":\"stable\",\"agent_type\":\"claude\"}\n"; got != want {
		t.Fatalf("on connect:\n%s\nwant:\n%s", got, want)
	}
	post, _ := http.NewRequest(http.MethodPost, base+"message", strings.NewReader(`{"type":"user","content":"hi"}`))
	post.Header.Set(coder.SessionTokenHeader, srv.Token)
	post.Header.Set("Content-Type", "application/json")
	presp, err := http.DefaultClient.Do(post)
	if err != nil || presp.StatusCode != 200 {
		t.Fatalf("POST message: %v %v", presp, err)
	}
	presp.Body.Close()
	want := "event: status_change\ndata: {\"status\":\"running\",\"agent_type\":\"claude\"}\n\n" +
		"event: message_update\ndata: {\"id\":0,\"role\":\"user\",\"message\":\"hi\",\"time\":\"2026-01-05T09:00:00Z\"}\n"
	if got := lines(6); got != want {
		t.Fatalf("after a message:\n%s\nwant:\n%s", got, want)
	}

	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the open event stream")
	}
	if rest, err := io.ReadAll(r); err == nil && len(rest) > 0 {
		t.Errorf("after Close: %q", rest)
	}
}
