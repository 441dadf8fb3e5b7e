// Package httpguard is the hardening every agentinfra HTTP server uses —
// `serve --http` (MCP), `metadata serve`, and the fake Coder of the tests
// run by hand — in one place:
//
//   - a loopback listen address unless remote access is asked for
//     (CheckAddr);
//   - a bearer token, kept in a file created 0600 (LoadOrCreateToken,
//     DefaultTokenFile), checked in constant time;
//   - the Host header of a request that arrived on loopback must name
//     loopback (DNS rebinding: a web page cannot reach the server through a
//     domain that resolves to 127.0.0.1);
//   - the Origin header, when a browser sends one, must be the server's own
//     origin or a loopback one (the MCP specification requires servers to
//     check it);
//   - time limits on reading a request's headers and body, so that slow
//     clients cannot hold connections open (a body is read whole, within
//     BodyTimeout, before the handler sees it), and on idle keep-alive
//     connections;
//   - a graceful shutdown when the context ends.
package httpguard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 10 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxBodyBytes  = 4 << 20
	DefaultMaxHeaderSize = 64 << 10
)

// Options tune Handler and Server; the zero value is the defaults with
// every check on except the token.
type Options struct {
	// Token, when set, must come with every request as
	// "Authorization: Bearer TOKEN" (else 401); the scheme's case does not
	// matter (RFC 9110: "bearer" is as good).
	Token string
	// TokenHint says how to get the token, in the 401's text. Anyone who
	// reaches the server reads it: it names a command, never the token
	// file's path (which would tell them the account's home folder).
	TokenHint string
	// AnyHost turns the Host check off, for a server reached through a
	// proxy that forwards the public Host (a Coder workspace app).
	AnyHost bool
	// HeaderTimeout bounds reading a request's headers, BodyTimeout its
	// body, IdleTimeout a keep-alive connection waiting for the next
	// request (0: the defaults).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// MaxBodyBytes bounds a request's body (0: 4 MiB): more is a 413.
	MaxBodyBytes int64
	// ConnContext, when set, is the server's http.Server.ConnContext: what
	// the context of each connection's requests carries of the connection
	// (the console and MCP check the process at its other end).
	ConnContext func(ctx context.Context, c net.Conn) context.Context
}

func (o Options) withDefaults() Options {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return o
}

// IsLoopbackHost reports whether host (no port) names only the loopback interface.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses a listen address that is not HOST:PORT, or not loopback
// unless allowRemote; flag names the option in messages (--http, --addr),
// why says what anyone who reaches the server could do.
func CheckAddr(flag, addr string, allowRemote bool, why string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT, e.g. 127.0.0.1:8765: %w", flag, addr, err)
	}
	if IsLoopbackHost(host) || allowRemote {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("%s %s listens on %s, not loopback: anyone who can reach it %s; use 127.0.0.1:PORT, or pass --allow-remote",
		flag, addr, shown, why)
}

// DefaultTokenFile is where a server keeps its token when no file is
// given: $XDG_CONFIG_HOME/agentinfra/NAME, else ~/.config/agentinfra/NAME
// (getenv reads the environment; "" when neither is known).
func DefaultTokenFile(getenv func(string) string, name string) string {
	if getenv == nil {
		return ""
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agentinfra", name)
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "agentinfra", name)
	}
	return ""
}

// LoadOrCreateToken reads the bearer token from path, creating the file with
// a random 256-bit token (mode 0600, its folder 0700) when it does not
// exist; created reports that. A file that group or others may read is
// refused: a token is a password.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var r [32]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", false, fmt.Errorf("generate token: %w", err)
		}
		token = hex.EncodeToString(r[:])
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, fmt.Errorf("create token file: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", false, fmt.Errorf("create token file: %w", err)
		}
		if _, err := f.WriteString(token + "\n"); err != nil {
			f.Close()
			return "", false, fmt.Errorf("write token file: %w", err)
		}
		if err := f.Close(); err != nil {
			return "", false, fmt.Errorf("write token file: %w", err)
		}
		return token, true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read token file: %w", err)
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("token file %s is readable by others (mode %v): run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	token = strings.TrimSpace(string(b))
	if token == "" {
		return "", false, fmt.Errorf("token file %s is empty: write a token into it, or delete it to have one generated", path)
	}
	return token, false, nil
}

// Handler wraps next with the checks, in this order: Host (403), Origin
// (403), token (401), then the body is read whole within BodyTimeout
// (408 when it does not come in time, 413 when it is too large).
func Handler(next http.Handler, o Options) http.Handler {
	o = o.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.AnyHost && !hostOK(r) {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not loopback (DNS rebinding protection)", r.Host), http.StatusForbidden)
			return
		}
		if !originOK(r) {
			http.Error(w, fmt.Sprintf("forbidden: a request from origin %q (only the server's own origin or a loopback one is allowed)", r.Header.Get("Origin")), http.StatusForbidden)
			return
		}
		if o.Token != "" && !bearerIs(r.Header.Get("Authorization"), o.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentinfra"`)
			msg := "unauthorized: send Authorization: Bearer TOKEN"
			if o.TokenHint != "" {
				msg += " (" + o.TokenHint + ")"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, status, err := readBody(w, r, o)
			if err != nil {
				w.Header().Set("Connection", "close")
				http.Error(w, err.Error(), status)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// bearerIs reports whether the Authorization header h carries token with
// the Bearer scheme: credentials = auth-scheme 1*SP token68, the scheme
// compared without case (RFC 9110, section 11.1), the token in constant
// time.
func bearerIs(h, token string) bool {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimLeft(cred, " ")), []byte(token)) == 1
}

// readBody reads r's body within o.BodyTimeout and o.MaxBodyBytes, then
// lifts the read deadline: a long answer (an SSE stream) must not be cut
// by it. After a failed read the deadline stays: the server must not wait
// for the rest of the body before it closes the connection.
func readBody(w http.ResponseWriter, r *http.Request, o Options) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(o.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		if deadline == nil {
			_ = rc.SetReadDeadline(time.Time{})
		}
		return body, 0, nil
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", o.MaxBodyBytes)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, http.StatusRequestTimeout, fmt.Errorf("request body not received within %s", o.BodyTimeout)
	default:
		return nil, http.StatusBadRequest, fmt.Errorf("read request body: %v", err)
	}
}

// hostOK: a request that arrived on a loopback address must name a
// loopback host.
func hostOK(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	lhost, _, err := net.SplitHostPort(la.String())
	if err != nil || !IsLoopbackHost(lhost) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return IsLoopbackHost(host)
}

// originOK: no Origin (not a browser), the server's own origin, or a
// loopback one.
func originOK(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed page, a file) and anything unreadable
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return IsLoopbackHost(u.Hostname())
}

// Server is an http.Server serving h with o's checks and time limits. Its
// WriteTimeout is none: answers may stream (MCP's SSE).
func Server(h http.Handler, o Options) *http.Server {
	o = o.withDefaults()
	return &http.Server{
		Handler:           Handler(h, o),
		ReadHeaderTimeout: o.HeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderSize,
		ConnContext:       o.ConnContext,
	}
}

// Serve serves h on ln (Server) until ctx is done, then shuts down,
// waiting up to grace for requests in flight.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o Options, grace time.Duration) error {
	srv := Server(h, o)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}
