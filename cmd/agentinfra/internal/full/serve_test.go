package full

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/task"
)

func serveFactory(t *testing.T, in string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	if _, err := task.Init(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	return testFactory(root, cliOpts{Stdin: in})
}

// serve over the command's stdin/stdout: protocol only on stdout, exit 0 when
// the client closes stdin.
func TestServeStdioInProcess(t *testing.T) {
	f, _, errb := serveFactory(t, "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f.IO.In, f.IO.Out = inR, outW
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"serve", "--log-level", "debug"}, f); outW.Close() }()
	lines := bufio.NewScanner(outR)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("stdout ended; stderr:\n%s", errb)
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", lines.Text())
		}
		return m
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	if m := next(); m["id"] != float64(1) {
		t.Fatalf("want the initialize response, got %v", m)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task","arguments":{"action":"create","description":"from stdin","mode":"coder"}}}`+"\n")
	m := next()
	b, _ := json.Marshal(m)
	if m["id"] != float64(2) || !strings.Contains(string(b), `"description":"from stdin"`) || strings.Contains(string(b), `"isError":true`) {
		t.Errorf("create response: %s", b)
	}
	inW.Close()
	for lines.Scan() {
		var m map[string]any
		if json.Unmarshal(lines.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", lines.Text())
		}
	}
	if c := <-code; c != 0 {
		t.Errorf("exit %d on stdin EOF; stderr:\n%s", c, errb)
	}
}

func TestServeUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--http", "0.0.0.0:8765"}, "--allow-remote"},
		{[]string{"serve", "--http", ":8765", "--allow-remote", "--no-token"}, "needs a token"},
		{[]string{"serve", "--no-token"}, "--http only"},
		{[]string{"serve", "--allow-remote"}, "--http only"},
		{[]string{"serve", "--http", "nonsense"}, "HOST:PORT"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
	}
	for _, c := range cases {
		f, out, errb := serveFactory(t, "")
		if code := run(context.Background(), c.args, f); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errb, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: wrote to stdout: %q", c.args, out)
		}
	}
}
