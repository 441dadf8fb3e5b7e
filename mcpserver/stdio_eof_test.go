package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is the server's stdout: written by the transport, read by the
// test once the server returned.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) Close() error   { return nil }
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// stdioRequests are what a client pipes in: a request per id (with a
// notification among them), as `printf '...' | agentinfra serve` sends.
var stdioRequests = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
	`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"four","method":"resources/list"}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"task","arguments":{"action":"list","limit":2}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"no/such/method"}`,
}

// Issue 27, item 13: `echo '<initialize>' | agentinfra serve` answered 1
// time in 5 on a workspace of 30 tasks: the end of input reached the SDK
// while the handler was still at work, and the SDK drops every answer once
// its reader has ended. Every request read before the end of input is now
// answered before the server exits. 50 rounds in-process, each piping the
// requests then closing stdin (and 50 more with the initialize alone).
func TestStdioAnswersEveryRequestReadBeforeEndOfInput(t *testing.T) {
	ws := newWorkspace(t, 30)
	for _, c := range []struct {
		name  string
		lines []string
		ids   []string
	}{
		{"initialize alone", stdioRequests[:1], []string{"1"}},
		{"a session's requests", stdioRequests, []string{"1", "2", "3", `"four"`, "5", "6"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			missed := 0
			for round := range 50 {
				srv, err := New(Options{Workspace: ws, Getenv: testGetenv, Now: func() time.Time { return fixedNow }})
				if err != nil {
					t.Fatal(err)
				}
				out := &syncBuffer{}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				err = srv.ServeStdio(ctx, io.NopCloser(strings.NewReader(strings.Join(c.lines, "\n")+"\n")), out)
				cancel()
				srv.Close()
				if err != nil {
					t.Fatalf("round %d: ServeStdio: %v", round, err)
				}
				got := map[string]bool{}
				for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					var m struct {
						ID     json.RawMessage `json:"id"`
						Result json.RawMessage `json:"result"`
						Error  json.RawMessage `json:"error"`
					}
					if l == "" || json.Unmarshal([]byte(l), &m) != nil || (m.Result == nil && m.Error == nil) {
						continue
					}
					got[string(m.ID)] = true
				}
				for _, id := range c.ids {
					if !got[id] {
						missed++
						t.Errorf("round %d: no answer to request %s (answered: %v)", round, id, slices.Sorted(maps.Keys(got)))
						break
					}
				}
				if missed > 3 {
					t.Fatalf("%d of %d rounds missed answers", missed, round+1)
				}
			}
		})
	}
}
