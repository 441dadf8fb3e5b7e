package coder

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serveEvents answers every request with body as an event stream.
func serveEvents(t *testing.T, contentType, body string) (*Client, App) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{URL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return c, App{Owner: "alice", Workspace: "papi", Agent: "main", Slug: "ccw"}
}

// TestAgentEventsParsesTheEventStreamFormat: what other servers and
// proxies may send is read by the format's rules: CRLF lines, comments,
// several data lines, an event without data skipped, a type it does not
// know passed on with its data, an older AgentAPI's status_change without
// agent_type.
func TestAgentEventsParsesTheEventStreamFormat(t *testing.T) {
	body := ": keep-alive\r\n\r\n" +
		"event: message_update\r\ndata: {\"id\":0,\"role\":\"agent\",\r\ndata: \"message\":\"two\\nlines\",\"time\":\"2026-01-05T09:00:00Z\"}\r\n\r\n" +
		"event: screen_update\n\n" +
		"id: 7\nevent: agent_error\ndata:{\"message\":\"boom\",\"level\":\"error\"}\n\n" +
		"event: status_change\ndata: {\"status\":\"running\"}\n\n" +
		"data: {\"x\":1}\n\n"
	c, app := serveEvents(t, "text/event-stream; charset=utf-8", body)
	var got []AgentEvent
	err := c.AgentEvents(context.Background(), app, func(ev AgentEvent) bool { got = append(got, ev); return true })
	if KindOf(err) != KindUnavailable || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "ended") {
		t.Errorf("the end of the stream: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("%d events: %+v", len(got), got)
	}
	if m := got[0].MessageUpdate; got[0].Type != EventMessageUpdate || m == nil || m.ID != 0 || m.Role != "agent" || m.Message != "two\nlines" {
		t.Errorf("message_update over two data lines: %+v %s", m, got[0].Data)
	}
	if got[1].Type != "agent_error" || string(got[1].Data) != `{"message":"boom","level":"error"}` || got[1].MessageUpdate != nil || got[1].StatusChange != nil {
		t.Errorf("an unknown type: %+v", got[1])
	}
	if s := got[2].StatusChange; s == nil || s.Status != AgentAPIRunning || s.AgentType != "" {
		t.Errorf("status_change: %+v", s)
	}
	if got[3].Type != "message" {
		t.Errorf("an event without a type is %q, want message", got[3].Type)
	}
}

func TestAgentEventsRefusesWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	forever := func(AgentEvent) bool { return true }
	for name, tc := range map[string]struct {
		contentType, body, mentions string
	}{
		"not a stream":    {"text/html", "<html>Coder</html>", "not an event stream"},
		"bad status":      {"text/event-stream", "event: status_change\ndata: {\"status\":\"busy\"}\n\n", "status_change"},
		"broken JSON":     {"text/event-stream", "event: message_update\ndata: {\"id\":\n\n", "message_update"},
		"a line too long": {"text/event-stream", "event: message_update\ndata: \"" + strings.Repeat("x", maxEventLine) + "\"\n\n", "longer than"},
	} {
		c, app := serveEvents(t, tc.contentType, tc.body)
		err := c.AgentEvents(ctx, app, forever)
		if KindOf(err) != KindUnexpected || !strings.Contains(err.Error(), tc.mentions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
