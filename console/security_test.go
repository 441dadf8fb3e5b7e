package console_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/console"
)

func get(t *testing.T, c *http.Client, u string, ck *http.Cookie, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if ck != nil {
		req.AddCookie(ck)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestConsoleWithoutCookieIs401(t *testing.T) {
	w := newWorld(t)
	for _, p := range []string{"/inbox", "/board", "/fleet", "/sessions", "/events", "/inbox/list", "/static/console.js"} {
		resp, body := get(t, noRedirect(), w.base+p, nil, nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "agentinfra console") {
			t.Errorf("GET %s without a cookie: %s %q", p, resp.Status, body)
		}
	}
	// A cookie the console never gave is no better.
	resp, _ := get(t, noRedirect(), w.base+"/inbox", &http.Cookie{Name: console.CookieName(strings.TrimPrefix(w.base, "http://")), Value: strings.Repeat("ab", 32)}, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a made-up cookie: %s", resp.Status)
	}
}

func TestConsoleTokenWorksOnceAndBecomesAStrictCookie(t *testing.T) {
	w := newWorld(t)
	link := w.srv.Link(w.base)
	resp, _ := get(t, noRedirect(), link, nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/inbox" {
		t.Fatalf("first use: %s → %q", resp.Status, resp.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == console.CookieName(strings.TrimPrefix(w.base, "http://")) {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || strings.Contains(link, ck.Value) {
		t.Fatalf("cookie: %+v", ck)
	}
	if r, _ := get(t, noRedirect(), w.base+"/inbox", ck, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the cookie does not open the inbox: %s", r.Status)
	}
	again, body := get(t, noRedirect(), link, nil, nil)
	if again.StatusCode != http.StatusUnauthorized || len(again.Cookies()) != 0 || !strings.Contains(body, "used already") {
		t.Fatalf("second use of the link: %s %q", again.Status, body)
	}
	if r, _ := get(t, noRedirect(), w.base+"/login?token=", nil, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an empty token: %s", r.Status)
	}
}

func TestConsoleRefusesAWrongHost(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	for _, host := range []string{"evil.example", "evil.example:80", "127.0.0.1.nip.io"} {
		resp, body := get(t, noRedirect(), w.base+"/inbox", ck, map[string]string{"Host": host})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "DNS rebinding") {
			t.Errorf("Host %s: %s %q", host, resp.Status, body)
		}
	}
}

func post(t *testing.T, u string, ck *http.Cookie, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestConsoleRefusesACrossOriginPost(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	before := readFile(t, w.matrixPath())
	move := w.base + "/board/a1b2c3/move"
	form := url.Values{"status": {"DONE"}}
	for _, origin := range []string{"http://evil.example", "http://127.0.0.1:1", "null", ""} {
		resp, body := post(t, move, ck, origin, form)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST from origin %q: %s %q", origin, resp.Status, body)
		}
	}
	if after := readFile(t, w.matrixPath()); after != before {
		t.Fatal("a refused POST changed the matrix")
	}
	// The page's own origin is let through, and the move is made.
	resp, body := post(t, move, ck, w.base, form)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "TODO → DONE") {
		t.Fatalf("same-origin POST: %s %q", resp.Status, body)
	}
}
