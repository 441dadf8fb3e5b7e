package console

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Issue 27, item 14: the link tokens nobody used, and the sessions that
// expired, stayed in the console's memory for its whole life. Links are
// minted by the page's "Open on another device" and sign-ins made through
// the real server on 127.0.0.1; once expired, the next link or sign-in
// drops them.
func TestExpiredLinksAndSessionsArePruned(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	root := t.TempDir()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	svc, err := supervision.New(supervision.Options{Store: st, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Options{Workspace: ws, Supervision: svc, User: "ana", Now: clock, NoWatchers: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { Serve(ctx, ln, srv); close(done) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func() *http.Cookie {
		t.Helper()
		resp, err := client.Get(srv.Link(base))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, c := range resp.Cookies() {
			if c.Name == CookieName(ln.Addr().String()) {
				return c
			}
		}
		t.Fatalf("no cookie: %s", resp.Status)
		return nil
	}
	newLink := func(ck *http.Cookie) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/link", strings.NewReader(""))
		req.Header.Set("Origin", base)
		req.Header.Set("Accept", "application/json")
		req.AddCookie(ck)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /link: %s", resp.Status)
		}
	}

	ck := signIn()
	for range 20 {
		newLink(ck)
	}
	if tokens, sessions := srv.auth.counts(); tokens != 20 || sessions != 1 {
		t.Fatalf("after 20 links: %d tokens, %d sessions kept; want 20 and 1", tokens, sessions)
	}
	// The links expire unused; the next one drops them.
	advance(linkTTL + time.Minute)
	newLink(ck)
	if tokens, _ := srv.auth.counts(); tokens != 1 {
		t.Fatalf("after the links expired and one more was made: %d tokens kept, want 1", tokens)
	}
	// Sessions left idle expire; the next sign-in drops them.
	for range 5 {
		signIn()
	}
	advance(DefaultSessionIdle + time.Minute)
	signIn()
	if tokens, sessions := srv.auth.counts(); tokens != 0 || sessions != 1 {
		t.Fatalf("after the sessions expired and one more signed in: %d tokens, %d sessions kept; want 0 and 1", tokens, sessions)
	}
}
