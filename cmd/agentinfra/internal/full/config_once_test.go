package full

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// everySection is a config file with each section agentinfra reads.
const everySection = `matrix:
  aliases:
    status: {WIP: IN_PROGRESS}
models:
  fast: gemini-2.5-flash
  modes: {coder: fast}
fleet:
  cli: gemini
  timeout: 10m
coder:
  app_slug: ccw
`

// An in-process command decodes the config file once, however many
// services it uses (the vocabulary, the models, the fleet): config.Loads
// counts the file's reads.
func TestCommandsDecodeTheConfigOnce(t *testing.T) {
	root := fixtureWS(t)
	if err := os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(everySection), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"task", "list"},
		{"task", "update", "d4e5f6", "--status", "WIP"},
		{"task", "create", "-d", "x", "-m", "coder", "--skills", "go-testing"},
		{"model", "a1b2c3"},
		{"prompt", "a1b2c3"},
		{"dispatch", "a1b2c3", "--dry-run", "--force"},
		{"validate"},
		{"agent", "list", "--no-metadata"},
		{"project", "list"},
	} {
		before := config.Loads()
		code, _, errOut := runCLI(t, root, cliOpts{}, args...)
		if got := config.Loads() - before; code != 0 || got != 1 {
			t.Errorf("%v: exit %d (%s), read the config %d times; want once", args, code, errOut, got)
		}
	}
}

// strace runs argv under strace -f, writing the log to a file, and returns
// the log's path; stdin feeds the command when not nil. Without strace (or
// ptrace) the test skips, and fails with AGENTINFRA_E2E=1.
func strace(t *testing.T, dir string, env []string, stdin io.Reader, argv ...string) (logPath string, out string, err error) {
	t.Helper()
	var buf bytes.Buffer
	logPath, err = straceTo(t, dir, env, stdin, &buf, argv...)
	return logPath, buf.String(), err
}

// straceTo is strace with the process's stdout and stderr going to out as
// they come.
func straceTo(t *testing.T, dir string, env []string, stdin io.Reader, out io.Writer, argv ...string) (logPath string, err error) {
	t.Helper()
	st, lerr := exec.LookPath("strace")
	if lerr == nil {
		lerr = exec.Command(st, "-f", "-qq", "-o", os.DevNull, "true").Run()
	}
	if lerr != nil {
		if os.Getenv("AGENTINFRA_E2E") == "1" {
			t.Fatalf("strace cannot run (%v) and AGENTINFRA_E2E=1: install strace", lerr)
		}
		t.Skipf("strace cannot run (%v): it counts the opens of a real process", lerr)
	}
	logPath = filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(st, append([]string{"-f", "-qq", "-e", "trace=open,openat,openat2,clone,clone3,fork,vfork", "-o", logPath}, argv...)...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, env, stdin, out, out
	return logPath, cmd.Run()
}

var (
	straceLine = regexp.MustCompile(`^(\d+)\s+(.*)$`)
	openedPath = regexp.MustCompile(`^open(?:at|at2)?\(.*?"([^"]+)"`)
	cloneCall  = regexp.MustCompile(`^(?:clone3?|v?fork)\(`)
	resumed    = regexp.MustCompile(`^<\.\.\. (clone3?|v?fork) resumed>`)
	returned   = regexp.MustCompile(`= (\d+)$`)
)

// configOpens counts, per process, the opens of path in an strace -f log,
// and returns the first process (the command strace started). strace -f
// names threads by their own ids: a clone with CLONE_THREAD makes a thread
// of its caller's process, any other clone, fork or vfork a new process.
func configOpens(t *testing.T, logPath, path string) (first int, byProcess map[int]int) {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	proc := map[int]int{}     // thread → its process
	pending := map[int]bool{} // thread → its unfinished clone makes a thread
	processOf := func(tid int) int {
		if p, ok := proc[tid]; ok {
			return p
		}
		proc[tid] = tid
		return tid
	}
	byProcess = map[int]int{}
	opens := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var tid int
		fmt.Sscan(m[1], &tid)
		call := m[2]
		p := processOf(tid)
		if first == 0 {
			first = p
		}
		switch {
		case openedPath.MatchString(call):
			opens++
			if openedPath.FindStringSubmatch(call)[1] == path {
				byProcess[p]++
			}
		case cloneCall.MatchString(call) || resumed.MatchString(call):
			thread := strings.Contains(call, "CLONE_THREAD")
			if cloneCall.MatchString(call) && strings.HasSuffix(call, "<unfinished ...>") {
				pending[tid] = thread
				continue
			}
			if resumed.MatchString(call) {
				thread = pending[tid]
				delete(pending, tid)
			}
			if r := returned.FindStringSubmatch(call); r != nil {
				var child int
				fmt.Sscan(r[1], &child)
				if thread {
					proc[child] = p
				} else {
					proc[child] = child
				}
			}
		}
	}
	if opens == 0 {
		t.Fatalf("strace saw no open at all in %s", logPath)
	}
	return first, byProcess
}

// `agent start NAME --task ID`, the real process under strace: it claims
// the task (the task service: the vocabulary), picks the model (the models
// section), reads the fleet's settings and starts the supervisor — and
// opens .agent/config.yaml exactly once. The supervisor, a process of its
// own, opens it once too; no process opens it twice.
func TestAgentStartOpensTheConfigOnce(t *testing.T) {
	if os.Getenv(e2etools.EnvE2E) != "1" { // an agent and its supervisor under strace -f: a minute on 2 cores
		t.Skipf("end-to-end, runs with %s=1 (TestCommandsDecodeTheConfigOnce counts in-process)", e2etools.EnvE2E)
	}
	c := newFleetCLI(t)
	cfgPath := filepath.Join(c.repo, ".agent", "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(everySection), 0o644); err != nil {
		t.Fatal(err)
	}
	code, id, errOut := c.run("task", "create", "-d", "count the config opens", "-m", "coder")
	if code != 0 {
		t.Fatalf("task create: %s", errOut)
	}
	c.git("add", "-A")
	c.git("commit", "-q", "-m", "config")
	var created agentJSON
	c.json(&created, "agent", "create", "papi", "--spec", "s")
	c.waitStatus("papi", "idle")

	logPath, out, err := strace(t, c.repo, append(os.Environ(), c.env...), nil, c.bin, "agent", "start", "papi", "--task", strings.TrimSpace(id))
	if err != nil {
		t.Fatalf("agent start under strace: %v\n%s", err, out)
	}
	first, byPID := configOpens(t, logPath, cfgPath)
	if byPID[first] != 1 {
		t.Errorf("agent start opened %s %d times; want exactly once (opens by process: %v)", cfgPath, byPID[first], byPID)
	}
	for pid, n := range byPID {
		if n > 1 {
			t.Errorf("process %d opened the config %d times", pid, n)
		}
	}
	t.Logf("config.yaml opens by process (the first is agent start): %v", byPID)
	c.waitStatus("papi", "idle")
}

// The MCP server, the real process under strace: it reads the config when it
// starts, and then a session of task updates, a create, a claim, a list
// and a model choice opens it no more.
func TestServeHoldsTheConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := fixtureWS(t)
	cfgPath := filepath.Join(root, ".agent", "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(everySection), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := []map[string]any{
		{"name": "task", "arguments": map[string]any{"action": "claim", "id": "a1b2c3", "agent": "@papi"}},
		{"name": "task", "arguments": map[string]any{"action": "update", "id": "d4e5f6", "status": "WIP"}},
		{"name": "task", "arguments": map[string]any{"action": "update", "id": "c3d4e5", "priority": "P1"}},
		{"name": "task", "arguments": map[string]any{"action": "create", "description": "over MCP", "mode": "coder"}},
		{"name": "task", "arguments": map[string]any{"action": "list", "limit": 0}},
		{"name": "select_model", "arguments": map[string]any{"id": "a1b2c3"}},
		{"name": "list_agents", "arguments": map[string]any{}},
	}
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, c := range calls {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c})
		in.WriteString(string(b) + "\n")
	}
	// The server may answer the calls in any order: none depends on another.
	// stdin stays open until every answer is in (however slow the machine):
	// the server then exits on EOF.
	pr, pw := io.Pipe()
	answers := &answerCounter{want: len(calls) + 1, done: make(chan struct{})}
	go func() {
		io.WriteString(pw, in.String())
		select { // a bound, should the server die without answering
		case <-answers.done:
		case <-time.After(5 * time.Minute):
		}
		pw.Close()
	}()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "AGENTINFRA_GLOBAL_SKILLS=/nonexistent"}
	logPath, err := straceTo(t, root, env, pr, answers, taskBinary(t), "serve", "--root", root)
	out := answers.buf.String()
	if err != nil {
		t.Fatalf("serve under strace: %v\n%s", err, out)
	}
	answered := 0
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			ID     *int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
			Error any `json:"error"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil || *msg.ID == 0 {
			continue
		}
		if msg.Error != nil || msg.Result.IsError {
			t.Errorf("call %d failed: %s", *msg.ID, line)
		}
		answered++
	}
	if answered != len(calls) {
		t.Fatalf("%d of %d calls answered:\n%s", answered, len(calls), out)
	}
	first, byPID := configOpens(t, logPath, cfgPath)
	total := 0
	for _, n := range byPID {
		total += n
	}
	if byPID[first] != 1 || total != 1 {
		t.Errorf("serve opened the config %d times over %d tool calls (by process: %v); want once, at its start", total, len(calls), byPID)
	}
	if got, _ := os.ReadFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")); !strings.Contains(string(got), "| a1b2c3 | IN_PROGRESS | P2 |") ||
		!strings.Contains(string(got), "| d4e5f6 | IN_PROGRESS |") || !strings.Contains(string(got), "| c3d4e5 | BLOCKED | P1 |") {
		t.Errorf("the updates did not land:\n%s", got)
	}
}

// answerCounter keeps a server's output and closes done once it holds want
// JSON-RPC answers (lines with an id).
type answerCounter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	read int // bytes of buf already looked at
	want int
	done chan struct{}
}

func (a *answerCounter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf.Write(p)
	for {
		rest := a.buf.Bytes()[a.read:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		a.read += nl + 1
		var msg struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(rest[:nl], &msg) == nil && msg.ID != nil && a.want > 0 {
			if a.want--; a.want == 0 {
				close(a.done)
			}
		}
	}
	return len(p), nil
}
