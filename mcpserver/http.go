package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/supervision"
)

// MCPPath is where the streamable HTTP endpoint is served.
const MCPPath = "/mcp"

// ServeStdio serves one client over stdin/stdout until the client hangs up
// or ctx is done. Nothing but protocol messages is written to out. A line
// that is not a JSON-RPC message is answered with the JSON-RPC error and the
// session goes on (see stdioTransport).
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	if err := s.StartWatching(ctx); err != nil {
		s.log.Warn("no change notifications", "error", err)
	}
	err := s.mcp.Run(ctx, stdioTransport(in, out))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Defaults of HTTPOptions.
const (
	// DefaultMaxSessions bounds the MCP sessions an HTTP server holds: each
	// keeps state, so without a cap anyone who may initialize could grow
	// the server's memory without end.
	DefaultMaxSessions = 64
	// DefaultSessionIdle is how long a session may go without a request
	// before it is closed (the client then initializes a new one).
	DefaultSessionIdle = 30 * time.Minute
)

// TokenFileName is the default token file's name (httpguard.DefaultTokenFile).
const TokenFileName = "mcp-token"

// TokenHint is how a client that was refused learns to get the token (the
// 401's text): a command, run by the server's user, never the file's path.
const TokenHint = "the server's user prints it with `agentinfra serve --print-token` (and the server's --token-file, if it was started with one)"

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	// Addr is host:port to listen on, e.g. 127.0.0.1:8765 (port 0 picks one).
	Addr string
	// AllowRemote permits a non-loopback address; it requires a token.
	AllowRemote bool
	// TokenFile holds the bearer token clients must send (Authorization:
	// Bearer TOKEN). A missing file is created (mode 0600) with a random
	// token, and OnToken is told. Required unless NoToken.
	TokenFile string
	// NoToken serves without a token: any local user may call every tool.
	// Loopback only.
	NoToken bool
	// OnToken, if set, is called once when the server starts with a token:
	// created reports that the file was made now (the token is new).
	OnToken func(path, token string, created bool)
	// Ready, if set, is called with the listening URL of the endpoint.
	Ready func(url string)
	// MaxSessions and SessionIdle bound the sessions (0: the defaults).
	MaxSessions int
	SessionIdle time.Duration
	// Guard tunes the HTTP time limits (tests shorten them); its Token is set here.
	Guard httpguard.Options
}

// CheckHTTPFlags refuses a listen address that is not loopback unless
// remote access is allowed, and remote access without a token.
func CheckHTTPFlags(o HTTPOptions) error {
	if err := httpguard.CheckAddr("--http", o.Addr, o.AllowRemote, "could call every tool, and run agents as you"); err != nil {
		return err
	}
	if o.AllowRemote && o.NoToken {
		return fmt.Errorf("--allow-remote cannot go with --no-token: a server others can reach needs a token (--token-file FILE, or the default file)")
	}
	return nil
}

// HTTPHandler returns the streamable HTTP handler (the SDK's DNS-rebinding
// protection on; sessions idle for SessionIdle closed, no more than
// MaxSessions at once), wrapped in a bearer-token check when token is not
// empty. It serves MCPPath only. ServeHTTP adds httpguard's checks.
func (s *Server) HTTPHandler(token string) http.Handler {
	return s.httpHandler(token, HTTPOptions{})
}

func (s *Server) httpHandler(token string, o HTTPOptions) http.Handler {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: o.SessionIdle})
	var inner http.Handler = s.sessionCap(h, o.MaxSessions)
	if token != "" {
		inner = httpguard.Handler(inner, httpguard.Options{Token: token, TokenHint: TokenHint, AnyHost: true})
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, inner)
	mux.Handle(MCPPath+"/", inner)
	return mux
}

// sessionCap refuses a new session (a POST without Mcp-Session-Id: an
// initialize) with 503 while max sessions are open; requests of open
// sessions pass.
func (s *Server) sessionCap(next http.Handler, max int) http.Handler {
	var mu sync.Mutex
	starting := 0 // new sessions being set up, not yet in s.mcp.Sessions
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		if n := s.SessionCount() + starting; n >= max {
			mu.Unlock()
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("too many MCP sessions (%d): close one (DELETE with its Mcp-Session-Id), or wait for an idle one to expire", n), http.StatusServiceUnavailable)
			return
		}
		starting++
		mu.Unlock()
		defer func() { mu.Lock(); starting--; mu.Unlock() }()
		next.ServeHTTP(w, r)
	})
}

// SessionCount is how many client sessions the server holds.
func (s *Server) SessionCount() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// ServeHTTP serves streamable HTTP at MCPPath until ctx is done, behind
// httpguard: loopback unless AllowRemote, the token, Host and Origin
// checks, time limits on slow requests; sessions bounded.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions) error {
	if err := CheckHTTPFlags(o); err != nil {
		return err
	}
	guard := o.Guard
	switch {
	case o.NoToken:
	case o.TokenFile == "":
		return fmt.Errorf("no token file: give one (clients send its token as Authorization: Bearer TOKEN), or serve with no token on loopback")
	default:
		t, created, err := httpguard.LoadOrCreateToken(o.TokenFile)
		if err != nil {
			return err
		}
		guard.Token, guard.TokenHint = t, TokenHint
		if o.OnToken != nil {
			o.OnToken(o.TokenFile, t, created)
		}
	}
	if err := s.StartWatching(ctx); err != nil {
		s.log.Warn("no change notifications", "error", err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	url := "http://" + ln.Addr().String() + MCPPath
	if o.Ready != nil {
		o.Ready(url)
	}
	// No MCP tool decides (an agent must not approve agents); should one
	// change supervision state, the service checks the client's process
	// through the connection (supervision.WithConn) as the console does.
	guard.ConnContext = supervision.WithConn
	return httpguard.Serve(ctx, ln, s.httpHandler("", o), guard, 2*time.Second)
}
