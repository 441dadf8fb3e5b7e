package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
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

// Defaults of Options.SessionIdle and Options.SessionMax: a signed-in
// browser is signed out after a night without a request, and a week after
// it signed in whatever it does (a cookie copied off a machine stops
// working on its own).
const (
	DefaultSessionIdle = 12 * time.Hour
	DefaultSessionMax  = 7 * 24 * time.Hour
)

// auth holds the one-time tokens of the links printed or shown, and the
// session cookies they became. Both live in memory: a restarted console
// prints a new link. Tokens are deleted when used, and with the sessions
// that expired whenever a new one is made: neither grows without end.
type auth struct {
	mu        sync.Mutex
	tokens    map[string]time.Time // token → expiry
	sessions  map[string]*signedIn // cookie value → its session
	now       func() time.Time
	idle, max time.Duration
}

// signedIn is one browser's session: when it signed in, when it was last
// seen.
type signedIn struct{ start, seen time.Time }

func newAuth(now func() time.Time, idle, max time.Duration) *auth {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if max <= 0 {
		max = DefaultSessionMax
	}
	return &auth{tokens: map[string]time.Time{}, sessions: map[string]*signedIn{}, now: now, idle: idle, max: max}
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
	defer a.mu.Unlock()
	now := a.now()
	a.pruneLocked(now)
	a.tokens[t] = now.Add(linkTTL)
	return t
}

// redeem spends token (true once per token, within its time) and makes a
// session cookie value.
func (a *auth) redeem(token string) (cookie string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for t, exp := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			delete(a.tokens, t)
			if now.After(exp) {
				return "", false
			}
			a.pruneLocked(now)
			c := randomHex(32)
			a.sessions[c] = &signedIn{start: now, seen: now}
			return c, true
		}
	}
	return "", false
}

// pruneLocked drops the tokens and sessions that expired by now.
func (a *auth) pruneLocked(now time.Time) {
	for t, exp := range a.tokens {
		if now.After(exp) {
			delete(a.tokens, t)
		}
	}
	for c, s := range a.sessions {
		if a.expired(s, now) != "" {
			delete(a.sessions, c)
		}
	}
}

// expired says why s is over by now ("" while it is not).
func (a *auth) expired(s *signedIn, now time.Time) string {
	switch {
	case now.Sub(s.start) > a.max:
		return fmt.Sprintf("signed in more than %s ago", a.max)
	case now.Sub(s.seen) > a.idle:
		return fmt.Sprintf("no request for more than %s", a.idle)
	}
	return ""
}

// valid reports whether r carries a live session's cookie, and keeps that
// session alive; why says why a cookie the console gave no longer works.
func (a *auth) valid(r *http.Request) (ok bool, why string) {
	c, err := r.Cookie(CookieName(r.Host))
	if err != nil || c.Value == "" {
		return false, ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[c.Value]
	if s == nil {
		return false, ""
	}
	now := a.now()
	if why := a.expired(s, now); why != "" {
		delete(a.sessions, c.Value)
		return false, why
	}
	s.seen = now
	return true, ""
}

// counts is how many link tokens and sessions are kept (for tests of the
// pruning).
func (a *auth) counts() (tokens, sessions int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tokens), len(a.sessions)
}

// setSessionCookie gives the browser its session; it keeps it no longer
// than the session can live.
func setSessionCookie(w http.ResponseWriter, r *http.Request, value string, max time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(r.Host), Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		MaxAge: int(max / time.Second)})
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
