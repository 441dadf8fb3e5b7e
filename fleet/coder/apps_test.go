package coder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestAppURLPathApps(t *testing.T) {
	for _, tc := range []struct {
		base string
		app  App
		want string
	}{
		{"https://coder.example.com", App{Owner: "alice", Workspace: "papi", Agent: "main", Slug: "ccw"},
			"https://coder.example.com/@alice/papi.main/apps/ccw/status"},
		// Coder served under a path prefix keeps it.
		{"https://example.com/coder/", App{Owner: "alice", Workspace: "papi", Agent: "main", Slug: "ccw"},
			"https://example.com/coder/@alice/papi.main/apps/ccw/status"},
		// Names that need escaping are escaped one segment at a time.
		{"http://127.0.0.1:3000", App{Owner: "jo@corp", Workspace: "a b", Agent: "main", Slug: "my/app?"},
			"http://127.0.0.1:3000/@jo%40corp/a%20b.main/apps/my%2Fapp%3F/status"},
	} {
		c, err := New(Config{URL: tc.base, Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.AppURL(tc.app, "*.apps.example.com", "status")
		if err != nil || got != tc.want {
			t.Errorf("AppURL(%+v) = %q, %v; want %q", tc.app, got, err, tc.want)
		}
	}
}

// TestAppRequestArrivesEscaped sends a request to a path app whose names
// need escaping and checks what the server sees: each name intact in its
// own segment, the token in its header.
func TestAppRequestArrivesEscaped(t *testing.T) {
	var gotPath, gotToken string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotToken = r.URL.EscapedPath(), r.Header.Get(SessionTokenHeader)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"stable"}`))
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	app := App{Owner: "jo@corp", Workspace: "a b%", Agent: "main", Slug: "my/app"}
	st, err := c.AgentStatus(context.Background(), app)
	if err != nil || st.Status != AgentAPIStable {
		t.Fatalf("%+v, %v", st, err)
	}
	if gotToken != "secret" {
		t.Errorf("token %q", gotToken)
	}
	segs := strings.Split(strings.TrimPrefix(gotPath, "/@"), "/")
	var names []string
	for _, s := range segs {
		n, err := url.PathUnescape(s)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if strings.Join(names, "|") != "jo@corp|a b%.main|apps|my/app|status" {
		t.Errorf("the server saw %s → %q", gotPath, names)
	}
}

func TestAppURLSubdomainApps(t *testing.T) {
	c, err := New(Config{URL: "https://coder.example.com", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app := App{Owner: "Alice", Workspace: "Papi", Agent: "main", Slug: "ccw", Subdomain: true}
	for host, want := range map[string]string{
		"*.apps.example.com:8443": "https://ccw--main--papi--alice.apps.example.com:8443/message",
		"*-apps.example.com":      "https://ccw--main--papi--alice-apps.example.com/message",
	} {
		if got, err := c.AppURL(app, host, "message"); err != nil || got != want {
			t.Errorf("AppURL on %s = %q, %v; want %q", host, got, err, want)
		}
	}
	named := app
	named.SubdomainName = "ccw--main--papi--alice"
	if got, _ := c.AppURL(named, "*.apps.example.com", "status"); got != "https://ccw--main--papi--alice.apps.example.com/status" {
		t.Errorf("with Coder's subdomain name: %q", got)
	}
	// A name that cannot be part of a host is refused, not mangled.
	bad := app
	bad.Owner = "jo@corp"
	if _, err := c.AppURL(bad, "*.apps.example.com", "status"); KindOf(err) != KindInvalid {
		t.Errorf("owner jo@corp: %v", err)
	}
	// No wildcard host: say what to configure.
	_, err = c.AppURL(app, "", "status")
	if KindOf(err) != KindUnavailable || !strings.Contains(err.Error(), "CODER_WILDCARD_ACCESS_URL") {
		t.Errorf("no app host: %v", err)
	}
}

// TestAgentAPIProblemBody: the AgentAPI answers errors as problem+json;
// its title and detail reach the error.
func TestAgentAPIProblemBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"title":"Internal Server Error","status":500,"detail":"failed to send message: agent is busy"}`))
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.SendMessage(context.Background(), App{Owner: "a", Workspace: "w", Agent: "main", Slug: "ccw"},
		AgentMessage{Type: MessageUser, Content: "hi"})
	if KindOf(err) != KindUnavailable || !strings.Contains(err.Error(), "agent is busy") {
		t.Errorf("%v", err)
	}
}
