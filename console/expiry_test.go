package console_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/console"
)

// clock is a time a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func clockedWorld(t *testing.T, c *clock) *world {
	return newWorld(t, worldOpts{opts: func(o *console.Options) { o.Now = c.Now }})
}

// Issue 27, item 14: a console session never expired. It now ends after
// DefaultSessionIdle without a request, each request keeping it alive.
func TestConsoleSessionExpiresWhenIdle(t *testing.T) {
	c := &clock{t: time.Now()}
	w := clockedWorld(t, c)
	ck := w.login(t)
	if ck.MaxAge != int(console.DefaultSessionMax/time.Second) {
		t.Errorf("the cookie's Max-Age is %d, want the session's longest life", ck.MaxAge)
	}
	for range 3 { // a request within the idle time keeps it
		c.Add(console.DefaultSessionIdle - time.Minute)
		if resp, body := get(t, noRedirect(), w.base+"/inbox", ck, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("a request %s after the last one: %s %q", console.DefaultSessionIdle-time.Minute, resp.Status, body)
		}
	}
	c.Add(console.DefaultSessionIdle + time.Minute)
	resp, body := get(t, noRedirect(), w.base+"/inbox", ck, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "expired") || !strings.Contains(body, "agentinfra console") {
		t.Fatalf("after %s idle: %s %q, want 401 saying it expired and what to do", console.DefaultSessionIdle+time.Minute, resp.Status, body)
	}
	// Expired is gone: coming back sooner does not revive it.
	c.Add(-console.DefaultSessionIdle)
	if resp, _ := get(t, noRedirect(), w.base+"/inbox", ck, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an expired session came back: %s", resp.Status)
	}
}

// And DefaultSessionMax after it signed in, however busy.
func TestConsoleSessionExpiresAfterItsLongestLife(t *testing.T) {
	c := &clock{t: time.Now()}
	w := clockedWorld(t, c)
	ck := w.login(t)
	step := console.DefaultSessionIdle / 2
	var lived time.Duration
	for lived+step <= console.DefaultSessionMax {
		c.Add(step)
		lived += step
		if resp, _ := get(t, noRedirect(), w.base+"/inbox", ck, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s after signing in, busy: %s", lived, resp.Status)
		}
	}
	c.Add(console.DefaultSessionMax - lived + time.Minute)
	resp, body := get(t, noRedirect(), w.base+"/inbox", ck, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "signed in more than") {
		t.Fatalf("%s after signing in: %s %q, want 401", console.DefaultSessionMax+time.Minute, resp.Status, body)
	}
	// A new link signs in again.
	if resp, _ := get(t, noRedirect(), w.base+"/inbox", w.login(t), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a new sign-in: %s", resp.Status)
	}
}
