//go:build linux

package full

// A real supervised dispatch (the real binary, the real claude CLI against a
// scripted fake model) is kept moving: a turn that ends with a question
// raises a clarification prompt that `agentinfra inbox` lists, and
// `agentinfra answer pN continue|stop` decides it from another process.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

const (
	kmQuestion = "Which file should I create, a.txt or b.txt?"
	kmDone     = "Created a.txt, all done."
)

// clarifyingDispatch starts `agentinfra dispatch --approval-mode ask` with
// claude against a fake whose first answer is a question, and returns once
// `agentinfra inbox --json` lists the clarification prompt (its ref).
func clarifyingDispatch(t *testing.T, config string) (dir string, fake *fakemodel.Server, cmd *exec.Cmd, out *syncBuffer, env []string, ref string) {
	t.Helper()
	dir, _ = dispatchCLISetup(t)
	if config != "" {
		fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "config.yaml"), config)
	}
	fake = fakemodel.NewClaudeScript(t, func(a fakemodel.Ask) fakemodel.Answer {
		switch {
		case strings.Contains(a.User, "Continue with the task."):
			return fakemodel.Answer{Text: kmDone}
		case strings.Contains(a.User, "Please create the file"):
			return fakemodel.Answer{Text: kmQuestion}
		}
		return fakemodel.Answer{Text: "ok"}
	})
	cli := fakemodel.Claude(t, fake.URL)
	env = append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	cmd = exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", "claude", "--model", cli.Model, "--approval-mode", "ask",
		"--task-override", "Please create the file the user wants.")
	cmd.Dir, cmd.Env = dir, env
	out = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	poll.EventuallyWithin(t, fakemodel.Timeout, func() bool {
		inbox := exec.Command(taskBinary(t), "inbox", "--json")
		inbox.Dir, inbox.Env = dir, env
		b, err := inbox.Output()
		if err != nil {
			return false
		}
		var items []map[string]any
		if err := json.Unmarshal(b, &items); err != nil {
			t.Fatalf("inbox --json: %v\n%s", err, b)
		}
		for _, it := range items {
			if it["type"] == "prompt" {
				if it["kind"] != "clarification" || !strings.Contains(it["text"].(string), kmQuestion) {
					t.Fatalf("the prompt in the inbox: %v", it)
				}
				ref = it["ref"].(string)
				return true
			}
		}
		return false
	}, "no prompt reached the inbox; the dispatch said:\n%s", out)
	return dir, fake, cmd, out, env, ref
}

func answerPrompt(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	c := exec.Command(taskBinary(t), append([]string{"answer"}, args...)...)
	c.Dir, c.Env = dir, env
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("agentinfra answer %v: %v\n%s", args, err, b)
	}
}

func taskRow(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".agent", "DEVELOPMENT_MATRIX.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| a1b2c3 |") {
			return line
		}
	}
	t.Fatalf("no row a1b2c3 in the matrix:\n%s", b)
	return ""
}

func TestSupervisedDispatchClarificationContinuedFromInbox(t *testing.T) {
	dir, fake, cmd, out, env, ref := clarifyingDispatch(t, "")
	answerPrompt(t, dir, env, ref, "continue")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, out.String())
	}
	var bodies strings.Builder
	for _, r := range fake.Requests("/v1/messages") {
		bodies.Write(r.Body)
	}
	if !strings.Contains(bodies.String(), "Continue with the task.") {
		t.Fatalf("the continuation never reached the model; dispatch said:\n%s", out.String())
	}
	if row := taskRow(t, dir); !strings.Contains(row, "| REVIEW |") {
		t.Errorf("after a continued run the task is not in REVIEW: %s\n%s", row, out.String())
	}
}

// stop_status blocked: the operator's stop blocks the task, with who
// stopped it as the reason, though claude itself ended well.
func TestSupervisedDispatchClarificationStoppedBlocksTheTask(t *testing.T) {
	dir, _, cmd, out, env, ref := clarifyingDispatch(t, "supervision:\n  prompts:\n    stop_status: blocked\n")
	answerPrompt(t, dir, env, ref, "stop")
	cmd.Wait() // a blocked task is a failed dispatch
	if row := taskRow(t, dir); !strings.Contains(row, "| BLOCKED |") {
		t.Fatalf("stopped with stop_status blocked, the task is not BLOCKED: %s\n%s", row, out.String())
	}
	results, _ := filepath.Glob(filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "tracking", "*_result.json"))
	if len(results) != 1 {
		t.Fatalf("result files: %v\n%s", results, out.String())
	}
	b, err := os.ReadFile(results[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "stopped by @ana") {
		t.Errorf("the run's result does not say who stopped it:\n%s\ndispatch said:\n%s", b, out.String())
	}
}
