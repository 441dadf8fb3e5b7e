package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolsListBytes bounds the minified tools/list result: every client loads
// it on connect, and agents put it into their model's context. (Backlog.md's
// 20 tools take 18,398 bytes; ours took 22,661 with full output schemas.)
const maxToolsListBytes = 8192

// The tools/list result of the matrix toolset, as it crossed the wire to a
// real SDK client, minified, stays within maxToolsListBytes (the fleet's nine
// tools have their own budget, asserted in tools_fleet_test.go). Run with -v to see
// the sizes per tool.
func TestToolsListFootprint(t *testing.T) {
	ws := newWorkspace(t, 0)
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Now: func() time.Time { return fixedNow }, Toolsets: []string{ToolsetMatrix}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rec := &recordingTransport{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := rec.result("tools/list")
	if raw == nil {
		t.Fatal("no tools/list response recorded")
	}
	var min bytes.Buffer
	if err := json.Compact(&min, raw); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(min.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(listed.Tools) || len(res.Tools) == 0 {
		t.Fatalf("recorded %d tools, the client listed %d", len(res.Tools), len(listed.Tools))
	}
	report := footprintTable(min.Len(), res.Tools)
	t.Log("\n" + report)
	if min.Len() > maxToolsListBytes {
		t.Errorf("tools/list is %d bytes minified, over the budget of %d; shorten descriptions or schemas\n%s",
			min.Len(), maxToolsListBytes, report)
	}
}

// footprintTable lists each tool's share of tools/list, largest first.
func footprintTable(total int, tools []json.RawMessage) string {
	type row struct {
		name string
		size int
	}
	var rows []row
	for _, raw := range tools {
		var tl struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &tl)
		rows = append(rows, row{tl.Name, len(raw)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].size > rows[j].size })
	var b strings.Builder
	fmt.Fprintf(&b, "tools/list: %d bytes minified (budget %d)\n", total, maxToolsListBytes)
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-18s %5d\n", r.name, r.size)
	}
	return b.String()
}

// recordingTransport keeps the raw result of every response, by the method
// of the request it answers.
type recordingTransport struct {
	mcp.Transport

	mu      sync.Mutex
	methods map[jsonrpc.ID]string
	results map[string]json.RawMessage
}

func (r *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r.methods, r.results = map[jsonrpc.ID]string{}, map[string]json.RawMessage{}
	return &recordingConn{Connection: c, rec: r}, nil
}

func (r *recordingTransport) result(method string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.results[method]
}

type recordingConn struct {
	mcp.Connection
	rec *recordingTransport
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.rec.mu.Lock()
		c.rec.methods[req.ID] = req.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.rec.mu.Lock()
		if m, ok := c.rec.methods[resp.ID]; ok {
			c.rec.results[m] = append(json.RawMessage(nil), resp.Result...)
		}
		c.rec.mu.Unlock()
	}
	return msg, err
}
