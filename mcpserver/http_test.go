package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		addr        string
		allowRemote bool
		token       string
		wantErr     string
	}{
		{"127.0.0.1:8765", false, "", ""},
		{"localhost:8765", false, "", ""},
		{"[::1]:8765", false, "", ""},
		{"0.0.0.0:8765", false, "", "--allow-remote"},
		{":8765", false, "", "every interface"},
		{"192.168.1.10:8765", false, "", "not loopback"},
		{"0.0.0.0:8765", true, "", "--token-file"},
		{"0.0.0.0:8765", true, "/tmp/tok", ""},
		{"8765", false, "", "HOST:PORT"},
	}
	for _, c := range cases {
		err := CheckAddr(c.addr, c.allowRemote, c.token)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("CheckAddr(%q, %v, %q) = %v", c.addr, c.allowRemote, c.token, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("CheckAddr(%q, %v, %q) = %v, want an error mentioning %q", c.addr, c.allowRemote, c.token, err, c.wantErr)
		}
	}
}

func TestTokenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "token")
	tok, created, err := LoadOrCreateToken(p)
	if err != nil || !created || len(tok) != 64 {
		t.Fatalf("create: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600 (%v)", fi.Mode().Perm(), err)
	}
	again, created, err := LoadOrCreateToken(p)
	if err != nil || created || again != tok {
		t.Errorf("reload: %q %v %v", again, created, err)
	}
	os.Chmod(p, 0o644)
	if _, _, err := LoadOrCreateToken(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable token file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, _, err := LoadOrCreateToken(empty); err == nil {
		t.Errorf("empty token file accepted")
	}
}

func newHTTPServer(t *testing.T, token string) (*httptest.Server, *Server) {
	t.Helper()
	ws := newWorkspace(t, 1)
	srv, err := New(Options{Workspace: ws, Getenv: testGetenv, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(token))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs, srv
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`

func post(t *testing.T, url, host, auth string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// DNS-rebinding protection: a loopback server refuses a foreign Host header.
func TestHTTPRebindingProtection(t *testing.T) {
	hs, _ := newHTTPServer(t, "")
	if r := post(t, hs.URL+MCPPath, "", ""); r.StatusCode != http.StatusOK {
		t.Errorf("loopback initialize: %s", r.Status)
	}
	if r := post(t, hs.URL+MCPPath, "evil.example:80", ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %s, want 403", r.Status)
	}
	if r := post(t, hs.URL+"/other", "", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %s, want 404", r.Status)
	}
}

func TestHTTPBearerToken(t *testing.T) {
	hs, _ := newHTTPServer(t, "s3cret")
	if r := post(t, hs.URL+MCPPath, "", ""); r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %s", r.Status)
	}
	if r := post(t, hs.URL+MCPPath, "", "Bearer wrong"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %s", r.Status)
	}
	if r := post(t, hs.URL+MCPPath, "", "Bearer s3cret"); r.StatusCode != http.StatusOK {
		t.Errorf("right token: %s", r.Status)
	}
	// A real client with the token works end to end.
	hc := &http.Client{Transport: authTransport{"s3cret"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + MCPPath, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
}

type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Over HTTP too, a subscriber hears about external edits.
func TestHTTPSubscribe(t *testing.T) {
	hs, srv := newHTTPServer(t, "")
	if err := srv.StartWatching(context.Background()); err != nil {
		t.Fatal(err)
	}
	u := make(updates, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, u.opts()).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + MCPPath}, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: MatrixURI}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the client's GET stream open
	start := time.Now()
	b, _ := os.ReadFile(srv.Workspace().MatrixPath())
	os.WriteFile(srv.Workspace().MatrixPath(), append(b, "\nedited\n"...), 0o644)
	if d := u.wait(t, MatrixURI, start); d > notifyWithin {
		t.Errorf("HTTP notification after %v", d)
	}
}
