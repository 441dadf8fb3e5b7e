package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

func newHTTPServer(t *testing.T, token string) (*httptest.Server, *Server) {
	t.Helper()
	ws := newWorkspace(t, 1)
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Now: func() time.Time { return fixedNow }})
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
	t.Logf("HTTP notification after %v", u.wait(t, MatrixURI, start))
}

// serveHTTP runs ServeHTTP on a free loopback port for the test's life and
// returns the endpoint's URL.
func serveHTTP(t *testing.T, o HTTPOptions) (string, *Server) {
	t.Helper()
	ws := newWorkspace(t, 1)
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	o.Addr = "127.0.0.1:0"
	urlc := make(chan string, 1)
	o.Ready = func(u string) { urlc <- u }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	select {
	case u := <-urlc:
		return u, srv
	case err := <-done:
		t.Fatalf("ServeHTTP: %v", err)
	}
	return "", nil
}

// Sessions are bounded: past MaxSessions an initialize gets 503 (and
// holds nothing); idle ones expire after SessionIdle, which makes room.
func TestHTTPSessionsBounded(t *testing.T) {
	url, srv := serveHTTP(t, HTTPOptions{NoToken: true, MaxSessions: 5, SessionIdle: 500 * time.Millisecond})
	codes := map[int]int{}
	for i := 0; i < 50; i++ {
		codes[post(t, url, "", "").StatusCode]++
	}
	if codes[200] != 5 || codes[503] != 45 || srv.SessionCount() != 5 {
		t.Fatalf("50 initializes with a cap of 5: %v, %d sessions open", codes, srv.SessionCount())
	}
	poll.Eventually(t, func() bool { return srv.SessionCount() == 0 }, "sessions still open long after they went idle (SessionIdle 500ms)")
	if r := post(t, url, "", ""); r.StatusCode != 200 {
		t.Errorf("an initialize once the idle sessions expired: %s", r.Status)
	}
}

// Unauthenticated initializes are refused before any session exists: a
// flood of them leaves none and does not grow the server's heap. 2,000 by
// default, the 20,000 with AGENTINFRA_STRESS=1.
func TestHTTPUnauthenticatedFloodHoldsNothing(t *testing.T) {
	n := 2000
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		n = 20000
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	url, srv := serveHTTP(t, HTTPOptions{TokenFile: tokFile})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	var wg sync.WaitGroup
	var unauthorized atomic.Int64
	jobs := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				req, _ := http.NewRequest("POST", url, strings.NewReader(initBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusUnauthorized {
					unauthorized.Add(1)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	client.CloseIdleConnections()
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("%d unauthenticated initializes: %d refused with 401, %d sessions, heap %.1f → %.1f MB", n, unauthorized.Load(), srv.SessionCount(), float64(before)/1e6, float64(after)/1e6)
	if int(unauthorized.Load()) != n || srv.SessionCount() != 0 {
		t.Errorf("%d of %d refused, %d sessions open; want all refused and none open", unauthorized.Load(), n, srv.SessionCount())
	}
	if grew > 8<<20 {
		t.Errorf("the heap grew %d bytes over %d refused requests", grew, n)
	}
}

// The MCP server behind the guard: a browser page of another origin is
// refused, and a body that trickles in is cut.
func TestHTTPOriginAndSlowBody(t *testing.T) {
	url, _ := serveHTTP(t, HTTPOptions{NoToken: true, Guard: httpguard.Options{BodyTimeout: 300 * time.Millisecond}})
	for _, c := range []struct {
		origin string
		want   int
	}{{"", 200}, {"http://localhost:6274", 200}, {"https://evil.example", 403}, {"null", 403}} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Origin %q: %s, want %d", c.origin, resp.Status, c.want)
		}
	}
	host := strings.TrimPrefix(strings.TrimSuffix(url, MCPPath), "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", MCPPath, host, len(initBody), initBody[:10])
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "408") {
		t.Errorf("a body that stopped coming: %q, %v; want 408 well before 10 s", line, err)
	}
}
