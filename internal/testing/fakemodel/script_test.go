package fakemodel

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestScriptedShellRunsThroughEachRealCLI: each real CLI, allowed to run
// shell commands, runs the command the scripted fake asks for, and the fake's
// next request carries the tool's result.
func TestScriptedShellRunsThroughEachRealCLI(t *testing.T) {
	cases := []struct {
		name string
		fake func(testing.TB, Script) *Server
		cli  func(testing.TB, string) CLI
		argv func(c CLI) []string
	}{
		{"gemini", NewGeminiScript, func(t testing.TB, u string) CLI { return Gemini(t, u) }, func(c CLI) []string {
			return []string{c.Binary, "--prompt=Please touch ok.txt", "-m", c.Model, "-o", "stream-json", "--skip-trust", "--approval-mode", "yolo"}
		}},
		{"claude", NewClaudeScript, func(t testing.TB, u string) CLI { return Claude(t, u) }, func(c CLI) []string {
			return []string{c.Binary, "-p", "--output-format", "stream-json", "--verbose", "--model", c.Model, "--allowedTools", "Bash(touch:*)", "--", "Please touch ok.txt"}
		}},
		{"codex", NewCodexScript, func(t testing.TB, u string) CLI { return Codex(t, u) }, func(c CLI) []string {
			return append(append([]string{c.Binary, "exec", "--json", "--skip-git-repo-check", "-m", c.Model, "--dangerously-bypass-approvals-and-sandbox"}, c.ExtraArgs...), "--", "Please touch ok.txt")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var results atomic.Int64
			once := ShellOnce("touch", "touch ok.txt", "done")
			fake := tc.fake(t, func(a Ask) Answer {
				if a.ToolCall {
					results.Add(1)
				}
				return once(a)
			})
			c := tc.cli(t, fake.URL)
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			argv := tc.argv(c)
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = c.Dir, c.Env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.name, err, out)
			}
			if _, err := os.Stat(filepath.Join(c.Dir, "ok.txt")); err != nil {
				t.Fatalf("the command did not run: %v\n%s", err, out)
			}
			if results.Load() == 0 {
				t.Errorf("no request carried the tool's result\n%s", out)
			}
			if !strings.Contains(string(out), "done") {
				t.Errorf("the final answer is not the script's reply:\n%s", out)
			}
		})
	}
}
