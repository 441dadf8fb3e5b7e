package httpguard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
		{"0.0.0.0:8765", true, "/tmp/tok", ""},
		{"8765", false, "", "HOST:PORT"},
	}
	for _, c := range cases {
		err := CheckAddr("--http", c.addr, c.allowRemote || c.token != "", "could edit your tasks")
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

func TestDefaultTokenFile(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/ana"}, "/home/ana/.config/agentinfra/mcp-token"},
		{map[string]string{"HOME": "/home/ana", "XDG_CONFIG_HOME": "/cfg"}, "/cfg/agentinfra/mcp-token"},
		{map[string]string{"HOME": "/home/ana", "XDG_CONFIG_HOME": "relative"}, "/home/ana/.config/agentinfra/mcp-token"},
		{map[string]string{}, ""},
	} {
		if got := DefaultTokenFile(env(c.env), "mcp-token"); got != c.want {
			t.Errorf("DefaultTokenFile(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

// serve runs h behind the guard on a loopback port for the test's life.
func serve(t *testing.T, h http.Handler, o Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, o, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "ok %d", len(b))
})

func status(t *testing.T, addr string, mutate func(*http.Request)) int {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader("{}"))
	mutate(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The Host and Origin checks of a loopback server, and the token.
func TestHostOriginAndToken(t *testing.T) {
	addr := serve(t, ok, Options{Token: "s3cret"})
	_, port, _ := net.SplitHostPort(addr)
	auth := func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }
	for _, c := range []struct {
		name   string
		mutate func(*http.Request)
		want   int
	}{
		{"token", auth, 200},
		{"no token", func(*http.Request) {}, 401},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cres") }, 401},
		// Issue 27, item 14: the scheme is case-insensitive (RFC 9110).
		{"lowercase scheme", func(r *http.Request) { r.Header.Set("Authorization", "bearer s3cret") }, 200},
		{"uppercase scheme", func(r *http.Request) { r.Header.Set("Authorization", "BEARER s3cret") }, 200},
		{"more than one space", func(r *http.Request) { r.Header.Set("Authorization", "Bearer   s3cret") }, 200},
		{"another scheme", func(r *http.Request) { r.Header.Set("Authorization", "Basic s3cret") }, 401},
		{"no space", func(r *http.Request) { r.Header.Set("Authorization", "Bearers3cret") }, 401},
		{"the token alone", func(r *http.Request) { r.Header.Set("Authorization", "s3cret") }, 401},
		{"the token's case changed", func(r *http.Request) { r.Header.Set("Authorization", "Bearer S3CRET") }, 401},
		{"localhost Host", func(r *http.Request) { auth(r); r.Host = "localhost:" + port }, 200},
		{"foreign Host (DNS rebinding)", func(r *http.Request) { auth(r); r.Host = "evil.example:" + port }, 403},
		{"foreign Host, no token", func(r *http.Request) { r.Host = "evil.example" }, 403},
		{"same origin", func(r *http.Request) { auth(r); r.Header.Set("Origin", "http://"+addr) }, 200},
		{"loopback origin", func(r *http.Request) { auth(r); r.Header.Set("Origin", "http://localhost:6274") }, 200},
		{"foreign origin", func(r *http.Request) { auth(r); r.Header.Set("Origin", "https://evil.example") }, 403},
		{"null origin", func(r *http.Request) { auth(r); r.Header.Set("Origin", "null") }, 403},
		{"origin that only starts like loopback", func(r *http.Request) { auth(r); r.Header.Set("Origin", "http://127.0.0.1.evil.example") }, 403},
	} {
		if got := status(t, addr, c.mutate); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// AnyHost lifts the Host check only.
	anyHost := serve(t, ok, Options{AnyHost: true})
	if got := status(t, anyHost, func(r *http.Request) { r.Host = "coder.example.com" }); got != 200 {
		t.Errorf("AnyHost, a foreign Host: %d", got)
	}
	if got := status(t, anyHost, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }); got != 403 {
		t.Errorf("AnyHost, a foreign origin: %d", got)
	}
}

// slowClient opens a connection and sends head, then one byte of trickle
// every 50 ms, until the server closes the connection or 10 s pass. It
// returns the status line the server answered ("" for none) and whether
// the server closed the connection.
func slowClient(addr, head, trickle string) (statusLine string, closed bool, err error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	if _, err := io.WriteString(c, head); err != nil {
		return "", false, err
	}
	go func() {
		for i := 0; i < len(trickle); i++ {
			if _, err := c.Write([]byte{trickle[i]}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	statusLine = strings.TrimSpace(line)
	if err == nil {
		_, err = io.Copy(io.Discard, r) // the rest, up to the close
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return statusLine, false, nil // still open after 10 s
	}
	return statusLine, true, nil
}

// Slow clients (slowloris) do not hold connections: a body that trickles
// in is cut at BodyTimeout with 408, headers that trickle in at
// HeaderTimeout; 30 such clients at once are all closed, and the server
// still answers.
func TestSlowClientsAreCut(t *testing.T) {
	addr := serve(t, ok, Options{HeaderTimeout: 300 * time.Millisecond, BodyTimeout: 300 * time.Millisecond})
	body := "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	header := "POST / HTTP/1.1\r\nHost: " + addr + "\r\n"
	const n = 30
	var wg sync.WaitGroup
	type result struct {
		kind, status string
		closed       bool
		err          error
	}
	results := make(chan result, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			st, closed, err := slowClient(addr, body, strings.Repeat("x", 1000))
			results <- result{"body", st, closed, err}
		}()
		go func() {
			defer wg.Done()
			st, closed, err := slowClient(addr, header, strings.Repeat("X-Slow: 1\r\n", 100))
			results <- result{"headers", st, closed, err}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		switch {
		case r.err != nil:
			t.Errorf("%s: %v", r.kind, r.err)
		case !r.closed:
			t.Errorf("a client with slow %s still had its connection after 10 s", r.kind)
		case r.kind == "body" && !strings.Contains(r.status, "408"):
			t.Errorf("slow body: answered %q, want 408", r.status)
		}
	}
	if got := status(t, addr, func(*http.Request) {}); got != 200 {
		t.Errorf("after the slow clients: %d", got)
	}
}

// The body deadline ends with the body: an answer that takes longer than
// BodyTimeout (an MCP event stream) is not cut by it.
func TestLongAnswerOutlivesBodyTimeout(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		for i := 0; i < 4; i++ {
			fmt.Fprintf(w, "chunk %d\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(150 * time.Millisecond):
			}
		}
		fmt.Fprint(w, "end\n")
	})
	addr := serve(t, slow, Options{BodyTimeout: 100 * time.Millisecond})
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(b), "end\n") {
		t.Errorf("answer %q, %v: cut before its end", b, err)
	}
}

func TestBodyTooLarge(t *testing.T) {
	addr := serve(t, ok, Options{MaxBodyBytes: 10})
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat("x", 11)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("11 bytes over a limit of 10: %s", resp.Status)
	}
}
