package mcpserver

import (
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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	// Addr is host:port to listen on, e.g. 127.0.0.1:8765 (port 0 picks one).
	Addr string
	// AllowRemote permits a non-loopback address; it requires TokenFile.
	AllowRemote bool
	// TokenFile holds the bearer token clients must send (Authorization:
	// Bearer TOKEN). A missing file is created (mode 0600) with a random token.
	// Optional on loopback, required with AllowRemote.
	TokenFile string
	// Ready, if set, is called with the listening URL of the endpoint.
	Ready func(url string)
}

// IsLoopbackHost reports whether host (no port) names only the loopback interface.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses a non-loopback listen address unless remote access is
// allowed with a token file.
func CheckAddr(addr string, allowRemote bool, tokenFile string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765: %w", addr, err)
	}
	if IsLoopbackHost(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	if !allowRemote {
		return fmt.Errorf("--http %s listens on %s, not loopback: anyone who can reach it could edit your tasks; "+
			"use 127.0.0.1:PORT, or pass --allow-remote with --token-file FILE", addr, shown)
	}
	if tokenFile == "" {
		return fmt.Errorf("--allow-remote needs --token-file FILE: clients must send its token as Authorization: Bearer TOKEN")
	}
	return nil
}

// LoadOrCreateToken reads the bearer token from path, creating the file with
// a random token (mode 0600) when it does not exist. created reports that.
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

// HTTPHandler returns the streamable HTTP handler (DNS-rebinding protection
// on), wrapped in a bearer-token check when token is not empty. It serves
// MCPPath only.
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: 30 * time.Minute})
	var inner http.Handler = h
	if token != "" {
		inner = bearer(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, inner)
	mux.Handle(MCPPath+"/", inner)
	return mux
}

func bearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentinfra"`)
			http.Error(w, "unauthorized: send Authorization: Bearer TOKEN (the token is in the server's --token-file)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves streamable HTTP at MCPPath until ctx is done.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions) error {
	if err := CheckAddr(o.Addr, o.AllowRemote, o.TokenFile); err != nil {
		return err
	}
	var token string
	if o.TokenFile != "" {
		t, created, err := LoadOrCreateToken(o.TokenFile)
		if err != nil {
			return err
		}
		if created {
			s.log.Info("created token file", "path", o.TokenFile)
		}
		token = t
	}
	if err := s.StartWatching(ctx); err != nil {
		s.log.Warn("no change notifications", "error", err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	srv := &http.Server{Handler: s.HTTPHandler(token), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + MCPPath
	if o.Ready != nil {
		o.Ready(url)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
