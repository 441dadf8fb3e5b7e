package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/testing/testbin"
)

// agentinfraBin is agentinfra, with agentinfra-full beside it (which runs
// serve: agentinfra hands it over), built once per source tree (package
// testbin).
func agentinfraBin(t testing.TB) string { return testbin.Path(t, testbin.Agentinfra) }

// serveEnv is the environment of a served binary: no inherited workspace.
func serveEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTINFRA_ROOT=") {
			env = append(env, kv)
		}
	}
	return append(env, "AGENTINFRA_GLOBAL_SKILLS=/nonexistent-global-skills")
}

// The raw-pipe test: the built binary, a pipe, JSON-RPC written by hand. Every
// line on stdout must be a JSON-RPC 2.0 message, even with debug logging on.
func TestStdioRawPipe(t *testing.T) {
	installStubGemini(t, "ok") // dispatch_task's agent prints to its own stdout; none of it may leak
	ws := newWorkspace(t, 3)
	bin := agentinfraBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--root", ws.Root, "--log-level", "debug")
	cmd.Env = serveEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	var all []string
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// await reads lines until the response with id arrives.
	await := func(id int) map[string]any {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed before response %d; stderr:\n%s", id, stderr.String())
				}
				all = append(all, l)
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("stdout line is not JSON: %q", l)
				}
				if m["jsonrpc"] != "2.0" {
					t.Fatalf("stdout line is not JSON-RPC 2.0: %q", l)
				}
				if got, ok := m["id"].(float64); ok && int(got) == id {
					return m
				}
			case <-ctx.Done():
				t.Fatalf("timeout waiting for response %d; stderr:\n%s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-pipe","version":"0"}}}`)
	init := await(1)
	if res, _ := init["result"].(map[string]any); res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize result: %v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	tl := await(2)
	if !strings.Contains(fmt.Sprint(tl["result"]), "task_get_context") {
		t.Errorf("tools/list: %v", tl)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task","arguments":{"action":"list","limit":2}}}`)
	call := await(3)
	res, _ := call["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true || sc["total"] != float64(3) || len(sc["tasks"].([]any)) != 2 {
		t.Errorf("tools/call task list: %v", call)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"task","arguments":{"action":"update","id":"nosuch","status":"DONE"}}}`)
	bad := await(4)
	if res, _ := bad["result"].(map[string]any); res["isError"] != true {
		t.Errorf("bad id: want isError, got %v", bad)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"agentinfra://matrix"}}`)
	await(5)
	id := loadTasks(t, ws)[0].ID
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"dispatch_task","arguments":{"id":"` + id + `"},"_meta":{"progressToken":"tok"}}}`)
	disp := await(6)
	if res, _ := disp["result"].(map[string]any); res["isError"] == true || !strings.Contains(fmt.Sprint(res), "REVIEW") {
		t.Errorf("dispatch over stdio: %v", disp)
	}
	stdin.Close()
	for l := range lines { // the rest, until the server exits on EOF
		all = append(all, l)
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", l)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v on stdin EOF; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("debug logging produced nothing on stderr; the test would not catch logs on stdout")
	}
	t.Logf("%d stdout lines, all JSON-RPC; %d bytes of logs on stderr", len(all), stderr.Len())
}

// 20 concurrent MCP task creates (one server) plus 20 concurrent CLI creates
// (separate processes) lose nothing: 40 rows, 40 folders, unique IDs.
func TestConcurrentMCPAndCLICreates(t *testing.T) {
	ws := newWorkspace(t, 0)
	bin := agentinfraBin(t)
	_, cs := connect(t, ws, nil)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "task", Arguments: map[string]any{
				"action": "create", "description": fmt.Sprintf("mcp task %02d", i), "mode": "coder", "slug": fmt.Sprintf("mcp_%02d", i)}})
			if err != nil {
				errs <- err
			} else if res.IsError {
				errs <- fmt.Errorf("mcp create %d: %s", i, text(res))
			}
		}()
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "--root", ws.Root, "task", "create", "--description", fmt.Sprintf("cli task %02d", i),
				"--mode", "coder", "--slug", fmt.Sprintf("cli_%02d", i))
			cmd.Env = serveEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("cli create %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rows := loadTasks(t, ws)
	ids := map[string]bool{}
	descs := map[string]bool{}
	for _, r := range rows {
		ids[r.ID] = true
		descs[r.Description] = true
	}
	for i := range n {
		for _, d := range []string{"mcp task %02d", "cli task %02d"} {
			if !descs[fmt.Sprintf(d, i)] {
				t.Errorf("lost %q", fmt.Sprintf(d, i))
			}
		}
	}
	if len(rows) != 2*n || len(ids) != 2*n {
		t.Errorf("%d rows, %d unique IDs; want %d", len(rows), len(ids), 2*n)
	}
	dirs, _ := filepath.Glob(filepath.Join(ws.TasksDir(), "*_*"))
	if len(dirs) != 2*n {
		t.Errorf("%d task folders, want %d", len(dirs), 2*n)
	}
	// The server's cached view agrees with the file.
	var list TaskOutput
	callOK(t, cs, "task", map[string]any{"action": "list", "limit": 0}, &list)
	if list.Total != 2*n {
		t.Errorf("server lists %d tasks after the race, want %d", list.Total, 2*n)
	}
}

// The HTTP mode of the built binary: it refuses a non-loopback address
// without --allow-remote, and --allow-remote without a token; by default it
// serves /mcp on loopback with a token it generates, writes 0600 and prints
// once; --token-file names another file; --no-token serves without one.
func TestServeHTTPBinary(t *testing.T) {
	ws := newWorkspace(t, 1)
	bin := agentinfraBin(t)
	home := t.TempDir()
	env := append(serveEnv(), "HOME="+home, "XDG_CONFIG_HOME=")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"--http", "0.0.0.0:0", "--allow-remote", "--no-token"}, "needs a token"},
		{[]string{"--http", "127.0.0.1:0", "--no-token", "--token-file", "x"}, "give one"},
		{[]string{"--no-token"}, "apply to --http only"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--root", ws.Root}, c.args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: exit %d, %s; want 2 and %q", c.args, code, out, c.want)
		}
	}

	// The default: a token in ~/.config/agentinfra/mcp-token, made now,
	// printed this once.
	first := startHTTPServeEnv(t, bin, ws.Root, env)
	tokFile := filepath.Join(home, ".config", "agentinfra", "mcp-token")
	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("default token file: %v %v", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(tokFile)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("token folder: %v %v, want 0700", di, err)
	}
	b, _ := os.ReadFile(tokFile)
	tok := strings.TrimSpace(string(b))
	if len(tok) != 64 || !strings.Contains(first.stderr, tokFile) || strings.Count(first.stderr, tok) != 1 {
		t.Errorf("the first start should name the file and print the token once:\n%s", first.stderr)
	}
	if r := post(t, first.url, "", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %s, want 401", r.Status)
	}
	if r := post(t, first.url, "", "Bearer "+tok); r.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s", r.Status)
	}
	// Issue 27, item 14: the scheme is case-insensitive; the 401 says how
	// to get the token, not where its file is (anyone who reaches the
	// server reads it); that command prints it.
	if r := post(t, first.url, "", "bearer "+tok); r.StatusCode != http.StatusOK {
		t.Errorf("with the token, scheme in lowercase: %s", r.Status)
	}
	resp, err := http.Post(first.url, "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), home) || strings.Contains(string(body), "mcp-token") ||
		!strings.Contains(string(body), "agentinfra serve --print-token") {
		t.Errorf("the 401 names the token file, or not the command that prints the token: %s %q", resp.Status, body)
	}
	printed := exec.Command(bin, "serve", "--print-token")
	printed.Env = env
	if out, err := printed.Output(); err != nil || string(out) != tok+"\n" {
		t.Errorf("serve --print-token: %q %v, want the token", out, err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: first.url, HTTPClient: &http.Client{Transport: authTransport{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
	if !strings.Contains(text(res), "1 of 1") {
		t.Errorf("list over HTTP: %s", text(res))
	}
	cs.Close()
	first.stop()
	// The next start keeps the token and does not print it.
	again := startHTTPServeEnv(t, bin, ws.Root, env)
	if strings.Contains(again.stderr, tok) || !strings.Contains(again.stderr, tokFile) {
		t.Errorf("a later start printed the token, or did not say where it is:\n%s", again.stderr)
	}
	if r := post(t, again.url, "", "Bearer "+tok); r.StatusCode != http.StatusOK {
		t.Errorf("the kept token: %s", r.Status)
	}
	again.stop()

	// --token-file: created 0600 with a random token; requests without it get 401.
	other := filepath.Join(t.TempDir(), "token")
	named := startHTTPServeEnv(t, bin, ws.Root, env, "--token-file", other)
	defer named.stop()
	fi, err = os.Stat(other)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	b, _ = os.ReadFile(other)
	if r := post(t, named.url, "", "Bearer "+tok); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the default file's token on --token-file's server: %s, want 401", r.Status)
	}
	if r := post(t, named.url, "", "Bearer "+strings.TrimSpace(string(b))); r.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s", r.Status)
	}
	printed = exec.Command(bin, "serve", "--print-token", "--token-file", other)
	printed.Env = env
	if out, err := printed.Output(); err != nil || string(out) != string(b) {
		t.Errorf("serve --print-token --token-file: %q %v, want %q", out, err, b)
	}

	// --no-token: no token, and a warning.
	open := startHTTPServeEnv(t, bin, ws.Root, env, "--no-token")
	defer open.stop()
	if r := post(t, open.url, "", ""); r.StatusCode != http.StatusOK {
		t.Errorf("--no-token: %s", r.Status)
	}
	if !strings.Contains(open.stderr, "any local user can call every tool") {
		t.Errorf("--no-token gave no warning:\n%s", open.stderr)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

var servingRE = regexp.MustCompile(`at (http://\S+/mcp)`)

// served is a running `agentinfra serve --http`.
type served struct {
	url    string
	stderr string // up to the line with the URL
	stop   func()
}

// startHTTPServe runs `agentinfra serve --http 127.0.0.1:0 --no-token`
// (clients that cannot send headers: the Inspector) and returns its URL.
func startHTTPServe(t testing.TB, bin, root string, extra ...string) (string, func()) {
	t.Helper()
	s := startHTTPServeEnv(t, bin, root, serveEnv(), append([]string{"--no-token"}, extra...)...)
	return s.url, s.stop
}

// startHTTPServeEnv runs `agentinfra serve --http 127.0.0.1:0` in env.
func startHTTPServeEnv(t testing.TB, bin, root string, env []string, extra ...string) served {
	t.Helper()
	args := append([]string{"serve", "--root", root, "--http", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type seen struct{ url, text string }
	urlc := make(chan seen, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- seen{m[1], b.String()}
			}
		}
	}()
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	select {
	case u := <-urlc:
		return served{url: u.url, stderr: u.text, stop: stop}
	case <-time.After(15 * time.Second):
		stop()
		t.Fatal("serve --http did not report its address")
	}
	return served{stop: stop}
}
