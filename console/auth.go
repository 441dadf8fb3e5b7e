package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// CookiePrefix starts the name of the console's session cookie; the port
// ends it, because browsers keep cookies per host, not per port: two
// consoles on one machine (two workspaces) must not sign each other out.
const CookiePrefix = "agentinfra_console_"

// CookieName is the session cookie's name for a console reached at host
// (HOST:PORT).
func CookieName(host string) string {
	_, port, err := net.SplitHostPort(host)
	if err != nil || port == "" {
		port = "80"
	}
	return CookiePrefix + port
}

// linkTTL bounds how long a printed link can be used (once).
const linkTTL = 15 * time.Minute

// auth holds the one-time tokens of the links printed or shown, and the
// session cookies they became. Both live in memory: a restarted console
// prints a new link.
type auth struct {
	mu       sync.Mutex
	tokens   map[string]time.Time // token → expiry; deleted when used
	sessions map[string]bool      // cookie values
	now      func() time.Time
}

func newAuth(now func() time.Time) *auth {
	return &auth{tokens: map[string]time.Time{}, sessions: map[string]bool{}, now: now}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// mint makes a new one-time token.
func (a *auth) mint() string {
	t := randomHex(32)
	a.mu.Lock()
	a.tokens[t] = a.now().Add(linkTTL)
	a.mu.Unlock()
	return t
}

// redeem spends token (true once per token, within its time) and makes a
// session cookie value.
func (a *auth) redeem(token string) (cookie string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for t, exp := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			delete(a.tokens, t)
			if a.now().After(exp) {
				return "", false
			}
			c := randomHex(32)
			a.sessions[c] = true
			return c, true
		}
	}
	return "", false
}

func (a *auth) valid(r *http.Request) bool {
	c, err := r.Cookie(CookieName(r.Host))
	if err != nil || c.Value == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[c.Value]
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(r.Host), Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// sameOrigin: a change must come from the console's own page. Browsers
// send Origin with every POST; a page on another loopback port is another
// origin (though the same site, so SameSite cookies do not stop it).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return u.Host == r.Host
}
