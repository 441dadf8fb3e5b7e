// Command stub stands in for an agent CLI in the dispatch tests. STUB_MODE
// selects what it does; it ignores its arguments except for recording them.
//
//	ok       print a gemini stream-json session that succeeds (STUB_RESPONSE),
//	         after STUB_SLEEP_MS milliseconds, and once the file STUB_GATE
//	         exists when it is set (a test holds the run busy until then)
//	hang     start a grandchild in the same process group (pid to STUB_PIDFILE),
//	         print one event, then sleep forever; both ignore SIGTERM when
//	         STUB_IGNORE_TERM=1
//	detach   start a grandchild in a session of its own (pid to STUB_PIDFILE),
//	         then a session that succeeds (or hang with STUB_HANG=1)
//	sleep    (the grandchild) sleep forever
//	garbage  print non-JSON bytes and exit 0
//	empty    print nothing and exit 0
//	huge     print STUB_MB megabytes (default 50) of noise lines, one very long
//	         line, then a valid gemini session
//	crash    write to stderr (and the value of $STUB_ECHO_ENV) and exit STUB_EXIT (default 3)
//	stdin    count stdin bytes, report them as a codex thread id
//	signal   kill itself with SIGKILL after printing an init event
//	claude-renamed
//	         speak claude's stream-json control protocol (--version: a
//	         tested claude's), but ask permission with the tool's name in
//	         "tool" instead of "tool_name": a protocol change
//	claude-counter
//	         speak claude's stream-json control protocol, asking for one
//	         command that appends a line to counter.txt (counter.go)
//	exec     run `sh -c "$STUB_EXEC"` (an agent's shell command), its output
//	         and "exit N" to STUB_EXEC_OUT, then a session that succeeds
//	script   print the lines of the file STUB_SCRIPT one at a time (each
//	         written at once), but for these: "#gate PATH" waits until PATH
//	         exists, "#touch PATH" creates PATH, "#hang" sleeps forever;
//	         then exit 0 (a stream paced by the test)
//
// Without STUB_MODE the mode is read from the file beside the binary named
// as it is with ".mode" appended: a run whose environment is cleaned (the
// protocol check's) still gets it.
//
// In ok mode, STUB_PLAN=FILE makes the stub work like an agent in its
// worktree (the current directory): FILE is a JSON list of steps
// {"agent", "when", "write", "commit", "then_write", "response"}; the first
// whose agent is $AGENTINFRA_AGENT and whose "when" is in the prompt (each
// of its parts separated by "&&")
// writes its files, commits them all with git when "commit" is a message,
// writes then_write's files (left uncommitted) and answers "response"
// instead of STUB_RESPONSE. STUB_PROMPTS=DIR appends each prompt
// (--prompt=, else stdin) to DIR/$AGENTINFRA_AGENT.prompts, the prompts
// separated by a line "\x1e".
//
// In every mode, STUB_ENVFILE=PATH writes the stub's environment there
// (NUL-separated), and STUB_FILEINFO_ENV=NAME writes the path in $NAME, the file's
// permission bits (octal) and its content, one per line, to STUB_FILEINFO.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if f := os.Getenv("STUB_ARGSFILE"); f != "" {
		os.WriteFile(f, []byte(strings.Join(os.Args[1:], "\x00")), 0o644)
	}
	if f := os.Getenv("STUB_ENVFILE"); f != "" {
		os.WriteFile(f, []byte(strings.Join(os.Environ(), "\x00")), 0o644)
	}
	if name := os.Getenv("STUB_FILEINFO_ENV"); name != "" {
		path := os.Getenv(name)
		info := path + "\nmissing\n"
		if fi, err := os.Stat(path); err == nil {
			content, _ := os.ReadFile(path)
			info = fmt.Sprintf("%s\n%o\n%s", path, fi.Mode().Perm(), content)
		}
		os.WriteFile(os.Getenv("STUB_FILEINFO"), []byte(info), 0o644)
	}
	if os.Getenv("STUB_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer w.Flush()
	switch stubMode() {
	case "claude-renamed":
		claudeRenamed(w)
	case "claude-counter":
		claudeCounter(w)
	case "ok":
		if ms, _ := strconv.Atoi(os.Getenv("STUB_SLEEP_MS")); ms > 0 {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		if gate := os.Getenv("STUB_GATE"); gate != "" {
			for {
				if _, err := os.Stat(gate); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if err := work(); err != nil {
			fmt.Fprintln(os.Stderr, "stub:", err)
			os.Exit(1)
		}
		session(w)
	case "hang":
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), "STUB_MODE=sleep", "STUB_ARGSFILE=")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "start grandchild:", err)
			os.Exit(1)
		}
		// The session first: a test that sees the pid file knows the
		// session was announced.
		fmt.Fprintln(w, `{"type":"init","session_id":"hang-1","model":"stub"}`)
		w.Flush()
		os.WriteFile(os.Getenv("STUB_PIDFILE"), []byte(strconv.Itoa(gc.Process.Pid)), 0o644)
		fmt.Fprintln(os.Stderr, "stub: hanging")
		for {
			time.Sleep(time.Hour)
		}
	case "detach":
		// Like a shell command an agent runs in a session of its own (gemini
		// does) or a daemon: a grandchild outside the CLI's process group,
		// its pid to STUB_PIDFILE; then a session that succeeds, or a hang
		// with STUB_HANG=1.
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), "STUB_MODE=sleep", "STUB_ARGSFILE=")
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "start grandchild:", err)
			os.Exit(1)
		}
		os.WriteFile(os.Getenv("STUB_PIDFILE"), []byte(strconv.Itoa(gc.Process.Pid)), 0o644)
		if os.Getenv("STUB_HANG") == "1" {
			fmt.Fprintln(w, `{"type":"init","session_id":"detach-1","model":"stub"}`)
			w.Flush()
			for {
				time.Sleep(time.Hour)
			}
		}
		session(w)
	case "exec":
		// An agent running a shell command (`sh -c "$STUB_EXEC"`): its
		// output and exit status go to STUB_EXEC_OUT ("OUTPUT\nexit N"),
		// then a session that succeeds.
		cmd := exec.Command("sh", "-c", os.Getenv("STUB_EXEC"))
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		os.WriteFile(os.Getenv("STUB_EXEC_OUT"), fmt.Appendf(out, "\nexit %d\n", code), 0o644)
		session(w)
	case "script":
		script(w)
	case "sleep":
		for {
			time.Sleep(time.Hour)
		}
	case "garbage":
		fmt.Fprintln(w, "this is not json {{{ \x00\xff")
		fmt.Fprintln(w, "{\"type\": broken")
		fmt.Fprintln(os.Stderr, "stub: printed garbage")
	case "empty":
	case "stdin":
		n, _ := io.Copy(io.Discard, os.Stdin)
		fmt.Fprintf(w, `{"type":"thread.started","thread_id":"stdin-%d"}`+"\n", n)
		fmt.Fprintln(w, `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`)
	case "huge":
		mb, _ := strconv.Atoi(os.Getenv("STUB_MB"))
		if mb == 0 {
			mb = 50
		}
		line := strings.Repeat("noise ", 170) + "\n" // ~1 KiB
		for i := 0; i < mb*1024; i++ {
			w.WriteString(line)
		}
		long := strings.Repeat("L", 1<<20)
		for i := 0; i < 2; i++ { // one 2 MiB line
			w.WriteString(long)
		}
		w.WriteString("\n")
		fmt.Fprint(os.Stderr, strings.Repeat("stderr noise\n", 100000))
		fmt.Fprintln(os.Stderr, "stub: end of stderr")
		session(w)
	case "crash":
		fmt.Fprintln(w, `{"type":"init","session_id":"crash-1","model":"stub"}`)
		fmt.Fprintln(os.Stderr, "stub: fatal: something broke")
		if name := os.Getenv("STUB_ECHO_ENV"); name != "" {
			fmt.Fprintf(os.Stderr, "stub: invalid credential %s=%s\n", name, os.Getenv(name))
		}
		w.Flush()
		code, _ := strconv.Atoi(os.Getenv("STUB_EXIT"))
		if code == 0 {
			code = 3
		}
		os.Exit(code)
	case "signal":
		fmt.Fprintln(w, `{"type":"init","session_id":"sig-1","model":"stub"}`)
		w.Flush()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	default:
		fmt.Fprintln(os.Stderr, "stub: unknown STUB_MODE", stubMode())
		os.Exit(2)
	}
}

func stubMode() string {
	if m := os.Getenv("STUB_MODE"); m != "" {
		return m
	}
	if exe, err := os.Executable(); err == nil {
		if b, err := os.ReadFile(exe + ".mode"); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// claudeRenamed: claude's stream-json session whose permission request
// names the tool in a field of another name; then it waits for its input
// to end.
func claudeRenamed(w *bufio.Writer) {
	for _, a := range os.Args[1:] {
		if a == "--version" {
			fmt.Fprintln(w, "2.1.330 (Claude Code)")
			return
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	if !in.Scan() { // the first user message
		return
	}
	fmt.Fprintln(w, `{"type":"system","subtype":"init","session_id":"stub-renamed-1","model":"stub","tools":["Bash"]}`)
	fmt.Fprintln(w, `{"type":"control_request","request_id":"req-1","request":{"subtype":"can_use_tool","tool":"Bash","input":{"command":"touch agentinfra-doctor.txt"}}}`)
	w.Flush()
	for in.Scan() {
	}
}

func session(w *bufio.Writer) {
	resp := os.Getenv("STUB_RESPONSE")
	if resp == "" {
		resp = "stub response"
	}
	fmt.Fprintln(w, `{"type":"init","timestamp":"2026-01-01T00:00:00Z","session_id":"stub-session-1","model":"stub-model","extra":{"x":1}}`)
	fmt.Fprintln(w, `{"type":"message","role":"user","content":"ignored"}`)
	fmt.Fprintln(w, `{"type":"tool_use","tool_name":"read_file","tool_id":"t1","parameters":{"path":"a.go"}}`)
	fmt.Fprintln(w, `{"type":"tool_result","tool_id":"t1","status":"success","output":"ok"}`)
	js, _ := json.Marshal(resp)
	fmt.Fprintf(w, `{"type":"message","role":"assistant","content":%s,"delta":true}`+"\n", js)
	fmt.Fprintln(w, `{"type":"result","status":"success","stats":{"total_tokens":30,"input_tokens":21,"output_tokens":9,"tool_calls":1,"new_field":true}}`)
}

// step is one rule of STUB_PLAN.
type step struct {
	Agent     string            `json:"agent"`
	When      string            `json:"when"`
	Write     map[string]string `json:"write"`
	Commit    string            `json:"commit"`
	ThenWrite map[string]string `json:"then_write"`
	Response  string            `json:"response"`
}

// work records the prompt (STUB_PROMPTS) and does the first matching step
// of STUB_PLAN in the current directory.
func work() error {
	plan, prompts := os.Getenv("STUB_PLAN"), os.Getenv("STUB_PROMPTS")
	if plan == "" && prompts == "" {
		return nil
	}
	agent := os.Getenv("AGENTINFRA_AGENT")
	prompt, found := "", false
	for _, a := range os.Args[1:] {
		if p, ok := strings.CutPrefix(a, "--prompt="); ok {
			prompt, found = p, true
		}
	}
	if !found {
		b, _ := io.ReadAll(os.Stdin)
		prompt = string(b)
	}
	if prompts != "" {
		f, err := os.OpenFile(filepath.Join(prompts, agent+".prompts"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "%s\n\x1e\n", prompt)
		f.Close()
	}
	if plan == "" {
		return nil
	}
	b, err := os.ReadFile(plan)
	if err != nil {
		return err
	}
	var steps []step
	if err := json.Unmarshal(b, &steps); err != nil {
		return err
	}
	for _, s := range steps {
		if s.Agent != agent || !containsAll(prompt, strings.Split(s.When, "&&")) {
			continue
		}
		if err := writeFiles(s.Write); err != nil {
			return err
		}
		if s.Commit != "" {
			for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", s.Commit}} {
				if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
					return fmt.Errorf("git %s: %v: %s", args[0], err, out)
				}
			}
		}
		if err := writeFiles(s.ThenWrite); err != nil {
			return err
		}
		if s.Response != "" {
			os.Setenv("STUB_RESPONSE", s.Response)
		}
		return nil
	}
	return nil
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func writeFiles(files map[string]string) error {
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// script prints STUB_SCRIPT's lines, paced by its "#" lines (see the
// package doc).
func script(w *bufio.Writer) {
	b, err := os.ReadFile(os.Getenv("STUB_SCRIPT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "stub:", err)
		os.Exit(1)
	}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "#gate "):
			for {
				if _, err := os.Stat(strings.TrimPrefix(line, "#gate ")); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		case strings.HasPrefix(line, "#touch "):
			os.WriteFile(strings.TrimPrefix(line, "#touch "), nil, 0o644)
		case line == "#hang":
			for {
				time.Sleep(time.Hour)
			}
		default:
			fmt.Fprintln(w, line)
			w.Flush()
		}
	}
}
