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
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// agentinfraBin builds the agentinfra binary once per test run.
func agentinfraBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "agentinfra-mcp-test-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "agentinfra")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/agentinfra")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

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
// without --allow-remote and a token file, and serves /mcp on loopback.
func TestServeHTTPBinary(t *testing.T) {
	ws := newWorkspace(t, 1)
	bin := agentinfraBin(t)

	out, err := exec.Command(bin, "serve", "--root", ws.Root, "--http", "0.0.0.0:0").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--allow-remote") {
		t.Errorf("non-loopback without --allow-remote: exit %d, %s", code, out)
	}
	out, err = exec.Command(bin, "serve", "--root", ws.Root, "--http", "0.0.0.0:0", "--allow-remote").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--token-file") {
		t.Errorf("--allow-remote without --token-file: exit %d, %s", code, out)
	}

	url, stop := startHTTPServe(t, bin, ws.Root)
	defer stop()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := callOK(t, cs, "task", map[string]any{"action": "list"}, nil)
	if !strings.Contains(text(res), "1 of 1") {
		t.Errorf("list over HTTP: %s", text(res))
	}

	// --token-file: created 0600 with a random token; requests without it get 401.
	tokFile := filepath.Join(t.TempDir(), "token")
	url2, stop2 := startHTTPServe(t, bin, ws.Root, "--token-file", tokFile)
	defer stop2()
	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tok, _ := os.ReadFile(tokFile)
	if r := post(t, url2, "", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %s, want 401", r.Status)
	}
	if r := post(t, url2, "", "Bearer "+strings.TrimSpace(string(tok))); r.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s", r.Status)
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

// startHTTPServe runs `agentinfra serve --http 127.0.0.1:0` and returns its URL.
func startHTTPServe(t testing.TB, bin, root string, extra ...string) (string, func()) {
	t.Helper()
	args := append([]string{"serve", "--root", root, "--http", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = serveEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
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
		return u, stop
	case <-time.After(15 * time.Second):
		stop()
		t.Fatal("serve --http did not report its address")
	}
	return "", stop
}
