package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 18, item 7: one malformed line ended the stdio MCP server (8 of 10
// probes). Through the real binary: each probe gets a JSON-RPC error (or,
// for a well-formed message the server just does not know, its normal
// answer), and a ping after it is still answered.
func TestStdioMalformedLinesKeepTheServerServing(t *testing.T) {
	ws := newWorkspace(t, 1)
	bin := agentinfraBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--root", ws.Root)
	cmd.Env = serveEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("stdout line is not JSON-RPC 2.0: %q", sc.Text())
			}
			lines <- m
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v; stderr:\n%s", err, stderr.String())
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("the server closed stdout; stderr:\n%s", stderr.String())
			}
			return m
		case <-ctx.Done():
			t.Fatalf("no answer; stderr:\n%s", stderr.String())
		}
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}`)
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)

	for i, p := range []struct {
		line   string
		code   float64 // the error code expected; 0: any answer
		withID any     // the id the error carries
	}{
		{`{bad json`, -32700, nil},
		{`42`, -32600, nil},
		{`null`, -32600, nil},
		{`[]`, -32600, nil},
		{`"a string"`, -32600, nil},
		{`{"id":7,"method":"ping"}`, -32600, float64(7)},
		{`{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"1.0","id":"v1","method":"ping"}`, -32600, "v1"},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"not an object"}`, 0, float64(8)},
		{`{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`, 0, float64(9)},
		{`[{"jsonrpc":"2.0","id":11,"method":"ping"}]`, -32600, nil}, // no batches since 2025-06-18
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"task","arguments":{"action":"create","description":"` + strings.Repeat("x", 5<<20) + `"}}}`, -32600, nil},
	} {
		send(p.line)
		m := next()
		errObj, _ := m["error"].(map[string]any)
		switch {
		case p.code != 0 && (errObj == nil || errObj["code"] != p.code):
			t.Errorf("probe %d %.60q: answer %v, want error %v", i, p.line, m, p.code)
		case m["id"] != p.withID:
			t.Errorf("probe %d %.60q: answer id %v, want %v", i, p.line, m["id"], p.withID)
		}
		id := 100 + i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if m := next(); m["id"] != float64(id) || m["result"] == nil {
			t.Fatalf("after probe %d %.60q the server no longer answers: %v", i, p.line, m)
		}
	}
	stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v; stderr:\n%s", err, stderr.String())
	}
}

// Issue 18, items 8 and 10 through MCP: a description with a control
// character, or over the cell limit, is refused naming the parameter, and
// the matrix is not touched.
func TestTaskCreateRefusesControlCharactersAndHugeDescriptions(t *testing.T) {
	ws := newWorkspace(t, 1)
	_, cs := connect(t, ws, nil)
	before := treeHash(t, ws.Root)
	for _, desc := range []string{"nul\x00byte", "escape \x1b[2J", strings.Repeat("y", 64<<10+1)} {
		res := call(t, cs, "task", map[string]any{"action": "create", "description": desc, "mode": "coder"})
		if !res.IsError || !strings.HasPrefix(errMessage(t, res), "description") {
			t.Errorf("create %.30q: %.200s; want a refusal naming description", desc, text(res))
		}
		id := loadTasks(t, ws)[0].ID
		res = call(t, cs, "task", map[string]any{"action": "update", "id": id, "description": desc})
		if !res.IsError || !strings.HasPrefix(errMessage(t, res), "description") {
			t.Errorf("update %.30q: %.200s; want a refusal naming description", desc, text(res))
		}
	}
	if treeHash(t, ws.Root) != before {
		t.Fatal("a refused create or update changed the workspace")
	}
}

// The stdio filter in-process, with the official client on the other end
// (for the race detector): malformed lines between real requests are
// answered with errors while the client's calls go on.
func TestStdioTransportInProcess(t *testing.T) {
	ws := newWorkspace(t, 2)
	srv, err := New(Options{Workspace: ws, Getenv: testGetenv, Now: func() time.Time { return fixedNow }, Toolsets: []string{ToolsetMatrix}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, serverIn, serverOut) }()
	// The client's writes and the garbage go through one writer, a line at a time.
	w := &lineWriter{w: clientOut}
	var errLines []string
	errs := make(chan string, 100)
	rd, wr := io.Pipe()
	go func() { // split the server's output: errors with id null to the test, the rest to the client
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":null`) {
				errs <- sc.Text()
				continue
			}
			if _, err := wr.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		wr.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: rd, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.Write([]byte("{bad json\n"))
		var out TaskOutput
		callOK(t, cs, "task", map[string]any{"action": "list", "limit": 1}, &out)
		if out.Total != 2 {
			t.Fatalf("call %d: %+v", i, out)
		}
		errLines = append(errLines, <-errs)
	}
	for _, l := range errLines {
		if !strings.Contains(l, `"code":-32700`) {
			t.Errorf("error line %s", l)
		}
	}
	cs.Close()
	clientOut.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
}
