//go:build linux

package full

// Issue 30, with each real CLI (claude, codex, gemini) against a scripted
// fake model, through the real binary:
//   - a supervised dispatch without a terminal says on stderr each request
//     (its ID, what, the command that answers it) and each outcome; while
//     a request waits, session list, task list and task show say what
//     waits; a person's `session stop --reason` ends the run stopped —
//     never REVIEW, never success — with who, how and why in the output,
//     the exit code, the request, the session and the task README;
//   - a supervised fleet run that waits shows as waiting in agent list,
//     agent show, session list and their --json, and as busy again once
//     the request is approved; `approve ID --session` lets the same action
//     run again without a new request, while a different one still asks;
//     a stop is in agent history with who and why.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// attentionCLI is one real CLI and how to point it at a scripted fake.
type attentionCLI struct {
	name string
	fake func(testing.TB, fakemodel.Script) *fakemodel.Server
	prep func(t *testing.T, url string) fakemodel.CLI
}

var attentionCLIs = []attentionCLI{
	{runner.CLIClaude, fakemodel.NewClaudeScript, func(t *testing.T, u string) fakemodel.CLI { return fakemodel.Claude(t, u) }},
	{runner.CLICodex, fakemodel.NewCodexScript, func(t *testing.T, u string) fakemodel.CLI {
		c := fakemodel.Codex(t, u)
		codexProviderFile(t, c, u) // dispatch and the fleet pass codex no -c flags
		return c
	}},
	{runner.CLIGemini, fakemodel.NewGeminiScript, func(t *testing.T, u string) fakemodel.CLI { return fakemodel.Gemini(t, u) }},
}

// codexProviderFile puts the fake provider in codex's config.toml.
func codexProviderFile(t *testing.T, c fakemodel.CLI, url string) {
	fakemodel.WriteFile(t, filepath.Join(c.Home, ".codex", "config.toml"), fmt.Sprintf(`check_for_update_on_startup = false
model_provider = "fake"
model = "gpt-fake"
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`, url+"/v1"))
}

// forEachAttentionCLI runs fn once per real CLI, in parallel.
func forEachAttentionCLI(t *testing.T, fn func(t *testing.T, c attentionCLI)) {
	for _, c := range attentionCLIs {
		t.Run(c.name, func(t *testing.T) {
			e2etools.Bin(t, c.name) // skips without AGENTINFRA_E2E=1
			t.Parallel()
			fn(t, c)
		})
	}
}

// steps is a model that asks for each shell command in turn, one per
// answer (the first on the user's message, the next on each tool result),
// then says done. hold, when set, is waited for before step i is asked.
type steps struct {
	cmds []string
	hold map[int]chan struct{}
	next atomic.Int32
}

func (s *steps) script(a fakemodel.Ask) fakemodel.Answer {
	if !a.ToolCall && !strings.Contains(a.User, "MARK-30") {
		return fakemodel.Answer{Text: "done"}
	}
	i := int(s.next.Add(1) - 1)
	if i >= len(s.cmds) {
		return fakemodel.Answer{Text: "done"}
	}
	if h := s.hold[i]; h != nil {
		// Bounded, so a test that fails before releasing it still ends.
		select {
		case <-h:
		case <-time.After(fakemodel.Timeout):
		}
	}
	return fakemodel.Answer{Shell: s.cmds[i]}
}

// until waits until cond holds, failing with what it last saw.
func until(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.EventuallyNil(t, func() error {
		if ok, saw := cond(); !ok {
			return fmt.Errorf("never: %s; last seen:\n%s", what, saw)
		}
		return nil
	})
}

// binIn runs the real binary in dir with env.
func binIn(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(taskBinary(t), args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func jsonOf(t *testing.T, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
}

type sessionWait struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

type sessionJSON struct {
	ID      int64        `json:"id"`
	Status  string       `json:"status"`
	Waiting *sessionWait `json:"waiting"`
}

var requestLine = regexp.MustCompile(`agentinfra: request (\d+) waits for a person \(risk \w+\): ([^\n]*) — answer: agentinfra approve (\d+) / agentinfra reject (\d+) --reason TEXT\n`)

// askingDispatch is a supervised dispatch of task a1b2c3 without a
// terminal (standard input /dev/null, the outputs pipes) whose model asks
// for each of cmds in turn.
type askingDispatch struct {
	dir, readme    string
	home           string // the CLI's home (its settings)
	env            []string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
}

func startAskingDispatch(t *testing.T, c attentionCLI, cmds ...string) *askingDispatch {
	dir, _ := dispatchCLISetup(t)
	d := &askingDispatch{dir: dir, readme: filepath.Join(dir, ".agent", "tasks", "a1b2c3_add-retry", "README.md"), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	fakemodel.WriteFile(t, d.readme, "# Add retry\n\nRetry three times.\n\n## Status log\n\n")
	model := &steps{cmds: cmds}
	fake := c.fake(t, model.script)
	cli := c.prep(t, fake.URL)
	d.home = cli.Home
	d.env = append(append([]string{}, cli.Env...), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_TOOLS="+e2etools.Dir(), "AGENTINFRA_USER=ana", "NO_COLOR=1")
	d.cmd = exec.Command(taskBinary(t), "dispatch", "a1b2c3", "--cli", c.name, "--model", cli.Model, "--approval-mode", "ask",
		"--task-override", "MARK-30: please run the commands you are given, in the current folder.")
	d.cmd.Dir, d.cmd.Env = dir, d.env
	d.cmd.Stdout, d.cmd.Stderr = d.stdout, d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.cmd.Process.Kill(); d.cmd.Wait() })
	return d
}

// requests are the request lines said on stderr so far.
func (d *askingDispatch) requests() [][]string {
	return requestLine.FindAllStringSubmatch(d.stderr.String(), -1)
}

// nthRequest waits for the n-th (from 1) request line on stderr.
func (d *askingDispatch) nthRequest(t *testing.T, n int) []string {
	t.Helper()
	var m []string
	until(t, fmt.Sprintf("stderr names request #%d", n), func() (bool, string) {
		if all := d.requests(); len(all) >= n {
			m = all[n-1]
		}
		return m != nil, d.stderr.String()
	})
	return m
}

func TestSupervisedDispatchWithoutATerminalSaysWhatWaitsAndStopsHonestly(t *testing.T) {
	forEachAttentionCLI(t, func(t *testing.T, c attentionCLI) {
		d := startAskingDispatch(t, c, "touch ok.txt", "touch two.txt")
		dir, env, readme, cmd, stdout, stderr := d.dir, d.env, d.readme, d.cmd, d.stdout, d.stderr

		// The first request is said on stderr at once, with how to answer.
		first := d.nthRequest(t, 1)
		id := first[1]
		if first[3] != id || first[4] != id || !strings.Contains(first[2], "touch ok.txt") {
			t.Errorf("the request's line: %q", first[0])
		}
		// Waiting is a state: session list, its JSON, task list and show.
		_, list, _ := binIn(t, dir, env, "session", "list")
		if !strings.Contains(list, "waiting: request "+id+",") {
			t.Errorf("session list does not say the session waits:\n%s", list)
		}
		var sessions []sessionJSON
		_, js, _ := binIn(t, dir, env, "session", "list", "--json")
		jsonOf(t, js, &sessions)
		if len(sessions) != 1 || sessions[0].Status != "active" || sessions[0].Waiting == nil || sessions[0].Waiting.Ref != id || sessions[0].Waiting.Kind != "request" {
			t.Errorf("session list --json: %s", js)
		}
		sid := fmt.Sprint(sessions[0].ID)
		until(t, "task list --json says the task waits", func() (bool, string) {
			_, js, _ := binIn(t, dir, env, "task", "list", "--json")
			var tasks []struct {
				ID      string       `json:"id"`
				Waiting *sessionWait `json:"waiting"`
			}
			jsonOf(t, js, &tasks)
			return len(tasks) > 0 && tasks[0].ID == "a1b2c3" && tasks[0].Waiting != nil && tasks[0].Waiting.Ref == id && tasks[0].Waiting.Kind == "request", js
		})
		if _, show, _ := binIn(t, dir, env, "task", "show", "a1b2c3"); !strings.Contains(show, "Waiting:") || !strings.Contains(show, "agentinfra approve "+id) {
			t.Errorf("task show does not say the task waits:\n%s", show)
		}

		// The decision is said too.
		if code, _, e := binIn(t, dir, env, "approve", id); code != 0 {
			t.Fatalf("approve: exit %d: %s", code, e)
		}
		until(t, "stderr says the approval", func() (bool, string) {
			return strings.Contains(stderr.String(), "agentinfra: request "+id+" approved via terminal by @ana\n"), stderr.String()
		})
		second := d.nthRequest(t, 2)

		// A person stops the session while the second request waits.
		if code, _, e := binIn(t, dir, env, "session", "stop", sid, "--reason", "no longer needed"); code != 0 {
			t.Fatalf("session stop: exit %d: %s", code, e)
		}
		err := cmd.Wait()
		const why = "session stopped by @ana via terminal: no longer needed"
		out, said := stdout.String(), stderr.String()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 8 {
			t.Errorf("dispatch of a stopped run: %v, want exit 8\n%s\n%s", err, out, said)
		}
		for _, want := range []string{": stopped\n", "status:   TODO → BLOCKED\n", "reason:   " + why + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("dispatch's output lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(said, "agentinfra: request "+second[1]+" interrupted via terminal by @ana: "+why+"\n") || !strings.Contains(said, "error: the run was "+why) {
			t.Errorf("stderr does not say how the run ended:\n%s", said)
		}
		for _, never := range []string{"context canceled", "no result record", "success"} {
			if strings.Contains(out+said, never) {
				t.Errorf("a stop is reported as %q:\n%s\n%s", never, out, said)
			}
		}
		if m := matrixOf(t, dir); !strings.Contains(m, "| a1b2c3 | BLOCKED |") {
			t.Errorf("the stopped task is not BLOCKED:\n%s", m)
		}
		if r := readText(t, readme); !strings.Contains(r, "IN_PROGRESS → BLOCKED by @ana: "+why) {
			t.Errorf("the README does not say who stopped the run and why:\n%s", r)
		}
		ws, _ := workspace.New(dir)
		st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var reqID int64
		fmt.Sscan(second[1], &reqID)
		req, _ := st.Request(context.Background(), reqID)
		ses, _ := st.Session(context.Background(), sessions[0].ID)
		if req.Status != store.StatusInterrupted || req.Reason != why || req.DecidedBy != "ana" || req.Surface != store.SurfaceTerminal {
			t.Errorf("the stopped request: %+v", req)
		}
		if ses.StopText() != why {
			t.Errorf("the session's end: %+v", ses)
		}
		if _, err := os.Stat(filepath.Join(dir, "two.txt")); err == nil {
			t.Error("two.txt exists: the stopped request ran")
		}
	})
}

// Approve for this session: the same action asked again in the session
// runs without a new request; a different one still asks.
func TestApproveForTheSessionCoversTheSameActionOnly(t *testing.T) {
	forEachAttentionCLI(t, func(t *testing.T, c attentionCLI) {
		d := startAskingDispatch(t, c, "touch ok.txt", "touch ok.txt", "touch two.txt")
		settings := settingsFiles(t, d.home, d.dir)
		first := d.nthRequest(t, 1)
		code, out, e := binIn(t, d.dir, d.env, "approve", first[1], "--session")
		if code != 0 || !strings.Contains(out, "Request "+first[1]+" approved by @ana.") || !strings.Contains(out, "approved without asking until it ends") {
			t.Fatalf("approve --session: exit %d: %s%s", code, out, e)
		}
		second := d.nthRequest(t, 2)
		if !strings.Contains(second[2], "touch two.txt") {
			t.Fatalf("the same command asked again, or the next is not two.txt: %q\n%s", second[0], d.stderr)
		}
		if code, _, e := binIn(t, d.dir, d.env, "approve", second[1]); code != 0 {
			t.Fatalf("approve: exit %d: %s", code, e)
		}
		if err := d.cmd.Wait(); err != nil {
			t.Fatalf("dispatch: %v\n%s\n%s", err, d.stdout, d.stderr)
		}
		// Three commands ran (issue 30: gemini reported 0 tool calls after 2).
		if !strings.Contains(d.stdout.String(), " output tokens, 3 tool calls, ") {
			t.Errorf("dispatch does not count the three tool calls:\n%s", d.stdout)
		}
		if n := len(d.requests()); n != 2 {
			t.Errorf("%d requests, want 2:\n%s", n, d.stderr)
		}
		ws, _ := workspace.New(d.dir)
		st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		events, _ := st.Audit(context.Background(), 0)
		var covered int
		for _, ev := range events {
			if ev.Action == "policy_allowed" && strings.Contains(string(ev.Detail), `"scope":"session"`) && strings.Contains(string(ev.Detail), "touch ok.txt") {
				covered++
			}
		}
		if covered != 1 {
			t.Errorf("%d session-scoped approvals in the audit log, want 1: %+v", covered, events)
		}
		// The CLI's own mechanism is used where its scope is exactly the
		// approved one (codex: acceptForSession, per exact command); claude's
		// session rule would be beaten by agentinfra's ask-everything rule and
		// gemini's allow_always is broader (docs/supervision.md).
		var toCLI []string
		for _, ev := range events {
			if ev.Action == "session_approval_to_cli" {
				toCLI = append(toCLI, string(ev.Detail))
			}
		}
		want := 0
		if c.name == runner.CLICodex {
			want = 1
		}
		if len(toCLI) != want || (want == 1 && (!strings.Contains(toCLI[0], `"mechanism":"codex acceptForSession"`) ||
			!strings.Contains(toCLI[0], `"scope":"session"`) || !strings.Contains(toCLI[0], "touch ok.txt"))) {
			t.Errorf("approvals passed to %s's own mechanism: %q, want %d", c.name, toCLI, want)
		}
		// Issue 27: nothing of the approval is written to a settings file
		// of the CLI (its home, the worktree) nor to the policy.
		if after := settingsFiles(t, d.home, d.dir); !maps.Equal(settings, after) {
			t.Errorf("settings files changed by an approval for the session:\nbefore %q\nafter  %q", settings, after)
		}
	})
}

// settingsFiles are the contents of the files under roots where a CLI or
// agentinfra keeps permission rules: settings*.json, config.toml, codex's
// rules, gemini's policies, agentinfra's policy.yaml; and claude's
// .claude.json projects' allowedTools.
func settingsFiles(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				if e != nil && e.IsDir() && (e.Name() == ".git" || e.Name() == "sessions" || e.Name() == "projects") {
					return filepath.SkipDir
				}
				return nil
			}
			name, dir := e.Name(), filepath.Base(filepath.Dir(path))
			b, rerr := os.ReadFile(path)
			if rerr != nil {
				return nil
			}
			switch {
			case name == ".claude.json":
				var cfg struct {
					Projects map[string]struct {
						AllowedTools []string `json:"allowedTools"`
					} `json:"projects"`
				}
				json.Unmarshal(b, &cfg)
				for p, pr := range cfg.Projects {
					if len(pr.AllowedTools) > 0 {
						out[path+":"+p] = strings.Join(pr.AllowedTools, ",")
					}
				}
			case strings.HasPrefix(name, "settings") && strings.HasSuffix(name, ".json"), name == "config.toml", name == "policy.yaml",
				dir == "rules", dir == "policies":
				out[path] = string(b)
			}
			return nil
		})
	}
	return out
}
