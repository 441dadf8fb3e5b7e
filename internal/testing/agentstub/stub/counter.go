package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// claudeCounter speaks claude's stream-json control protocol (--version: a
// tested claude's) for the crash tests: its one call is Bash
// `echo ID >> counter.txt` (ID its tool_use id, which stays the same when
// the session is resumed with --resume), asked with can_use_tool, and run
// (the line appended) only when allowed. A run that finds its line in
// counter.txt does not make the call again (a model told to check the files
// before it repeats anything); one that does not asks the same call again,
// as claude does for a call its session left without a result. Then a
// result, and it waits for its input to end. Each run's first message is
// appended to the file beside the binary named .prompts (the prompts
// separated by a line "\x1e"); a file named .hold there holds it before
// it reads it.
func claudeCounter(w *bufio.Writer) {
	session := fmt.Sprintf("stub-counter-%d", os.Getpid())
	for i, a := range os.Args[1:] {
		switch a {
		case "--version":
			fmt.Fprintln(w, "2.1.330 (Claude Code)")
			return
		case "--resume":
			if i+2 < len(os.Args) {
				session = os.Args[i+2]
			}
		}
	}
	exe, _ := os.Executable()
	// A test holds the stub before it says its session while the file
	// beside it named .hold exists.
	for {
		if _, err := os.Stat(exe + ".hold"); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	if !in.Scan() { // the first user message
		return
	}
	var first struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	json.Unmarshal(in.Bytes(), &first)
	if f, err := os.OpenFile(exe+".prompts", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "%s\n\x1e\n", first.Message.Content)
		f.Close()
	}
	emit := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
		w.Flush()
	}
	emit(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "stub", "tools": []string{"Bash"}})
	tool := "toolu_" + session
	command := "echo " + tool + " >> counter.txt"
	if !hasLine("counter.txt", tool) {
		input := map[string]string{"command": command}
		emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": tool, "name": "Bash", "input": input}}}})
		req := fmt.Sprintf("req-%d", os.Getpid())
		emit(map[string]any{"type": "control_request", "request_id": req,
			"request": map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": input, "tool_use_id": tool}})
		allowed, answered := false, false
		for !answered && in.Scan() {
			var c struct {
				Type     string `json:"type"`
				Response struct {
					RequestID string `json:"request_id"`
					Response  struct {
						Behavior string `json:"behavior"`
					} `json:"response"`
				} `json:"response"`
			}
			if json.Unmarshal(in.Bytes(), &c) == nil && c.Type == "control_response" && c.Response.RequestID == req {
				answered, allowed = true, c.Response.Response.Behavior == "allow"
			}
		}
		if !answered {
			return // the input ended: the run was stopped
		}
		decision, result := "reject", "denied"
		if allowed {
			f, err := os.OpenFile("counter.txt", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err == nil {
				fmt.Fprintln(f, tool)
				err = f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "stub:", err)
				os.Exit(1)
			}
			decision, result = "accept", ""
		}
		emit(map[string]any{"type": "user", "session_id": session, "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": tool, "content": result, "is_error": !allowed}}},
			"tool_result_meta": []any{map[string]any{"id": tool, "permission_decision": map[string]string{"decision": decision, "source": "user_temporary"}}}})
	}
	emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": "done"}}}})
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "done", "session_id": session,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 2}})
	for in.Scan() {
	}
}

// hasLine reports whether file has a line that is line.
func hasLine(file, line string) bool {
	b, _ := os.ReadFile(file)
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			return true
		}
	}
	return false
}
