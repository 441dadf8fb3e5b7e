package agentcli

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/claude"
	"github.com/agentinfra/agentinfra/agentcli/codex"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/runner"
)

// Outputs recorded from the pinned runner.CLIs (gemini-cli 0.61.0, claude-code
// 2.1.330, codex 0.169.0) against the fake servers, trimmed of fields the
// parsers ignore.
const (
	geminiJSONOK = `{
  "session_id": "079ac098-406f-49bd-a216-6e346cb9fa20",
  "response": "Hello from fake gemini",
  "stats": {
    "models": {
      "gemini-2.5-flash": {
        "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 38, "errorsByType": {}},
        "tokens": {"input": 11, "prompt": 11, "candidates": 5, "total": 16, "cached": 0, "thoughts": 0, "tool": 0}
      }
    },
    "tools": {"totalCalls": 2, "totalSuccess": 2, "totalFail": 0, "byName": {}},
    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0}
  }
}`
	geminiJSONErrStderr = `Warning: 256-color support not detected.
[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics.
Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json _ApiError: {"error":{"code":401}}
  status: 401
}
{
  "session_id": "71fcb96a-b038-45c6-98e0-b8ba24db11e7",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":401,\"message\":\"fake failure 401\",\"status\":\"UNAUTHENTICATED\"}}",
    "code": 401
  }
}
`
	geminiStreamErr = `{"type":"init","timestamp":"2026-11-21T23:35:07.344Z","session_id":"8790643a-f3c0","model":"gemini-2.5-flash"}
{"type":"message","timestamp":"2026-11-21T23:35:07.346Z","role":"user","content":"hi"}
{"type":"error","severity":"warning","message":"quota nearly used"}
{"type":"result","timestamp":"2026-11-21T23:35:07.591Z","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":401,\"message\":\"fake failure 401\",\"status\":\"UNAUTHENTICATED\"}}]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"duration_ms":0,"tool_calls":0}}
`
	claudeJSONIsError = `{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"0c3ae513-c5db","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"terminal_reason":"api_error","is_error":true,"num_turns":1,"subtype":"success","api_error_status":401,"api_error_type":"authentication_error","result":"Failed to authenticate. API Error: 401 fake failure 401","type":"result","duration_ms":164}`
	claudeStreamOK    = `{"type":"system","subtype":"init","cwd":"/tmp/cwork","session_id":"dee7dbf9","tools":["Bash","Read"],"model":"claude-sonnet-4-5","new_field":{"a":[1,2]}}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"tu1","name":"Read","input":{"file_path":"a.go"}}]},"session_id":"dee7dbf9"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"package a","is_error":false}]},"session_id":"dee7dbf9"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Done: a.go is fine."}]},"session_id":"dee7dbf9"}
{"type":"result","subtype":"success","is_error":false,"result":"Done: a.go is fine.","session_id":"dee7dbf9","usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":50,"output_tokens":6},"num_turns":2}
`
	codexFailed = `{"type":"thread.started","thread_id":"01a20078-25e6"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`gpt-fake`" + ` not found."}}
{"type":"turn.started"}
{"type":"error","message":"unexpected status 401 Unauthorized: fake failure 401, url: http://127.0.0.1:18082/v1/responses"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: fake failure 401, url: http://127.0.0.1:18082/v1/responses"}}
`
	codexToolsOK = `{"type":"thread.started","thread_id":"t-1"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","status":"in_progress"}}
{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a.go\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"First."}}
{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"Changed a.go."}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"output_tokens":30}}
`
)

func TestParseRecordedOutputs(t *testing.T) {
	for _, tc := range []struct {
		name           string
		r              runner.Runner
		stdout, stderr string
		exit           int
		want           runner.Result
		wantErr        string // substring of Error; "" = success
	}{
		{"gemini json ok", gemini.Runner{}, geminiJSONOK, "", 0,
			runner.Result{SessionID: "079ac098-406f-49bd-a216-6e346cb9fa20", Response: "Hello from fake gemini", InputTokens: 11, OutputTokens: 5, ToolCalls: 2, Model: "gemini-2.5-flash"}, ""},
		{"gemini json 401 on stderr", gemini.Runner{}, "", geminiJSONErrStderr, 145,
			runner.Result{SessionID: "71fcb96a-b038-45c6-98e0-b8ba24db11e7"}, "gemini: API error 401: fake failure 401 (exit 145: HTTP 401 from the API)"},
		{"gemini stream error", gemini.Runner{}, geminiStreamErr, "", 145,
			runner.Result{SessionID: "8790643a-f3c0", Model: "gemini-2.5-flash"}, "gemini: API error 401: fake failure 401"},
		{"gemini exit 55 no output", gemini.Runner{}, "", "Refusing to run in an untrusted folder", 55,
			runner.Result{}, "untrusted folder"},
		{"claude is_error with subtype success", claude.Runner{}, claudeJSONIsError, "", 1,
			runner.Result{SessionID: "0c3ae513-c5db", Response: "Failed to authenticate. API Error: 401 fake failure 401"}, "claude reported an error, subtype success (API status 401): Failed to authenticate"},
		{"claude stream ok", claude.Runner{}, claudeStreamOK, "", 0,
			runner.Result{SessionID: "dee7dbf9", Response: "Done: a.go is fine.", InputTokens: 162, OutputTokens: 6, ToolCalls: 1, Model: "req-model"}, ""},
		{"claude no result", claude.Runner{}, `{"type":"system","subtype":"init","session_id":"s"}`, "", 0,
			runner.Result{SessionID: "s", Model: "req-model"}, "claude printed no result record"},
		{"codex failed", codex.Runner{}, codexFailed, "", 1,
			runner.Result{SessionID: "01a20078-25e6"}, "codex: unexpected status 401 Unauthorized: fake failure 401"},
		{"codex tools ok", codex.Runner{}, codexToolsOK, "", 0,
			runner.Result{SessionID: "t-1", Response: "Changed a.go.", InputTokens: 100, OutputTokens: 30, ToolCalls: 2}, ""},
		{"codex incomplete", codex.Runner{}, `{"type":"thread.started","thread_id":"x"}`, "", 0,
			runner.Result{SessionID: "x"}, "without completing its turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := runner.Request{Model: "req-model"}
			got := runner.Parse(tc.r, req, []byte(tc.stdout), []byte(tc.stderr), tc.exit)
			if tc.want.Model == "" {
				tc.want.Model = got.Model
			}
			if got.SessionID != tc.want.SessionID || got.Response != tc.want.Response || got.Model != tc.want.Model ||
				got.InputTokens != tc.want.InputTokens || got.OutputTokens != tc.want.OutputTokens || got.ToolCalls != tc.want.ToolCalls {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if tc.wantErr == "" && got.Error != "" {
				t.Errorf("unexpected error %q", got.Error)
			}
			if tc.wantErr != "" && !strings.Contains(got.Error, tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", got.Error, tc.wantErr)
			}
		})
	}
}

func TestParseStreamEvents(t *testing.T) {
	p := claude.Runner{}.NewParser(runner.Request{})
	var got []string
	for line := range strings.Lines(claudeStreamOK) {
		for _, e := range p.Line([]byte(strings.TrimSpace(line))) {
			got = append(got, e.String())
		}
	}
	want := []string{"init: claude-sonnet-4-5", "message: Let me look.", `tool_use Read: {"file_path":"a.go"}`, "tool_result: success", "message: Done: a.go is fine.", "result: success"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
}

func TestGeminiDeltasBecomeOneMessageEvent(t *testing.T) {
	stream := `{"type":"init","session_id":"s","model":"m"}
{"type":"message","role":"user","content":"hi"}
{"type":"message","role":"assistant","content":"Hel","delta":true}
{"type":"message","role":"assistant","content":"lo, ","delta":true}
{"type":"message","role":"assistant","content":"world.","delta":true}
{"type":"tool_use","tool_name":"ls","tool_id":"1","parameters":{}}
{"type":"tool_result","tool_id":"1","status":"success","output":"a"}
{"type":"message","role":"assistant","content":"Done","delta":true}
{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":2,"tool_calls":0}}
`
	p := gemini.Runner{}.NewParser(runner.Request{})
	var got []string
	for line := range strings.Lines(stream) {
		for _, e := range p.Line([]byte(strings.TrimSpace(line))) {
			got = append(got, e.String())
		}
	}
	want := []string{"init: m", "message: Hello, world.", "tool_use ls: {}", "tool_result 1: success a", "message: Done", "result: success"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	res := runner.Result{}
	p.Finish(&res, []byte(stream), nil)
	if res.Response != "Done" || res.ToolCalls != 1 {
		t.Errorf("response %q (the text after the last tool call), tools %d", res.Response, res.ToolCalls)
	}
}

// FuzzParsers: no input makes a parser panic, and output without a result is
// always an error.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{geminiJSONOK, geminiStreamErr, claudeJSONIsError, claudeStreamOK, codexFailed, codexToolsOK, "", "{", "{}\n{}", `{"type":"result"}`, `{"type":"item.completed","item":null}`, `{"type":"assistant","message":{"content":"str"}}`, `{"type":"message","role":"assistant","content":123}`} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, out []byte, exit int) {
		for _, r := range []runner.Runner{gemini.Runner{}, claude.Runner{}, codex.Runner{}} {
			res := runner.Parse(r, runner.Request{}, out, out, exit)
			if exit != 0 && res.Error == "" {
				t.Errorf("%s: exit %d without an error", r.Name(), exit)
			}
		}
	})
}

func TestParsersSurviveRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"{", "}", `"type"`, ":", `"result"`, `"message"`, `"item"`, "[", "]", ",", "\n", "null", "1", `"x"`, `"content"`, `"usage"`, `"error"`}
	for i := 0; i < 3000; i++ {
		var b bytes.Buffer
		for j := rng.IntN(60); j > 0; j-- {
			if rng.IntN(4) == 0 {
				b.WriteByte(byte(rng.IntN(256)))
			} else {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		}
		for _, r := range []runner.Runner{gemini.Runner{}, claude.Runner{}, codex.Runner{}} {
			runner.Parse(r, runner.Request{}, b.Bytes(), b.Bytes(), rng.IntN(3)) // must not panic
		}
	}
	// Recorded outputs with flipped bytes, cuts and injected lines.
	seeds := []string{geminiJSONOK, geminiStreamErr, geminiJSONErrStderr, claudeJSONIsError, claudeStreamOK, codexFailed, codexToolsOK}
	for i := 0; i < 3000; i++ {
		b := []byte(seeds[rng.IntN(len(seeds))])
		for k := rng.IntN(5); k >= 0 && len(b) > 0; k-- {
			switch j := rng.IntN(len(b)); rng.IntN(3) {
			case 0:
				b[j] = byte(rng.IntN(256))
			case 1:
				b = b[:j]
			default:
				b = append(b[:j:j], append([]byte("{\"type\":\"result\",\"item\":7}\n"), b[j:]...)...)
			}
		}
		exit := rng.IntN(300)
		for _, r := range []runner.Runner{gemini.Runner{}, claude.Runner{}, codex.Runner{}} {
			if res := runner.Parse(r, runner.Request{}, b, b, exit); exit != 0 && res.Error == "" {
				t.Errorf("%s: exit %d without an error on %q", r.Name(), exit, b)
			}
		}
	}
}

func TestCommandArgv(t *testing.T) {
	for _, tc := range []struct {
		r    runner.Runner
		req  runner.Request
		want string
	}{
		{gemini.Runner{}, runner.Request{Prompt: "p", Model: "m"}, "gemini --prompt=p -m m -o stream-json --skip-trust --approval-mode default"},
		{gemini.Runner{}, runner.Request{Prompt: "p", Model: "m", Session: "s", ApprovalMode: "yolo"}, "gemini --prompt=p -m m -o stream-json --skip-trust --approval-mode yolo --resume s"},
		{claude.Runner{}, runner.Request{Prompt: "-p", Model: "m", Session: "s", SystemPrompt: "sys", ApprovalMode: "auto_edit"}, "claude -p --output-format stream-json --verbose --model m --resume s --append-system-prompt sys --permission-mode acceptEdits -- -p"},
		{claude.Runner{}, runner.Request{Prompt: "p"}, "claude -p --output-format stream-json --verbose -- p"},
		{codex.Runner{}, runner.Request{Prompt: "p", Model: "m", Session: "s", ApprovalMode: "yolo"}, "codex exec --json --skip-git-repo-check -m m --dangerously-bypass-approvals-and-sandbox resume s -- p"},
		{codex.Runner{}, runner.Request{Prompt: "p", SystemPrompt: "say \"hi\"\n\\", ApprovalMode: "auto_edit"}, `codex exec --json --skip-git-repo-check -c developer_instructions="say \"hi\"\n\\" --sandbox workspace-write -- p`},
	} {
		c, err := tc.r.Command(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(c.Argv, " "); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.r.Name(), got, tc.want)
		}
		if c.Argv[c.PromptArg] != tc.req.Prompt && c.Argv[c.PromptArg] != "--prompt="+tc.req.Prompt {
			t.Errorf("%s: PromptArg %d points at %q", tc.r.Name(), c.PromptArg, c.Argv[c.PromptArg])
		}
	}
	if c, _ := (gemini.Runner{}).Command(runner.Request{Prompt: "p", Model: "m", SystemPromptFile: "/x/sys.md"}); strings.Join(c.Env, " ") != "GEMINI_SYSTEM_MD=/x/sys.md" {
		t.Errorf("gemini system prompt env %q", c.Env)
	}
	if c, _ := (claude.Runner{}).Command(runner.Request{Prompt: "p", SystemPrompt: "sys", SystemPromptFile: "/x/sys.md"}); strings.Join(c.Argv, " ") != "claude -p --output-format stream-json --verbose --append-system-prompt-file /x/sys.md -- p" {
		t.Errorf("claude with a system prompt file: %q", c.Argv)
	}
}

// A system prompt the runner cannot deliver is an error, never dropped or
// sent in a way the kernel refuses (E2BIG).
func TestCommandRefusesUndeliverableSystemPrompt(t *testing.T) {
	long := strings.Repeat("r", runner.ArgPromptLimit+1)
	for _, tc := range []struct {
		r    runner.Runner
		req  runner.Request
		want string
	}{
		{gemini.Runner{}, runner.Request{Prompt: "p", Model: "m", SystemPrompt: "role"}, "SystemPromptFile"},
		{claude.Runner{}, runner.Request{Prompt: "p", SystemPrompt: long}, "too long for claude's command line"},
		{codex.Runner{}, runner.Request{Prompt: "p", SystemPrompt: long}, "too long for codex's command line"},
	} {
		if _, err := tc.r.Command(tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.r.Name(), err, tc.want)
		}
	}
	if _, err := (gemini.Runner{}).Command(runner.Request{Prompt: "p"}); err == nil {
		t.Error("gemini without a model should be refused")
	}
}

// Issue 18, item 9: a --model or --session value that starts with "-" went
// to the agent CLI as an option of its own (claude … --model
// --dangerously-skip-permissions). All three runners refuse it.
func TestCommandRefusesModelOrSessionThatLooksLikeAnOption(t *testing.T) {
	for _, cli := range runner.CLIs {
		r, err := Runner(cli)
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range []runner.Request{
			{Prompt: "p", Model: "--dangerously-skip-permissions"},
			{Prompt: "p", Model: "m", Session: "--yolo"},
			{Prompt: "p", Model: "-m"},
			{Prompt: "p", Model: "m", Session: "a b"},
		} {
			if c, err := r.Command(req); err == nil || agenterr.KindOf(err) != agenterr.Invalid || agenterr.As(err).Field == "" {
				t.Errorf("%s %+v: argv %q, err %v; want it refused as an invalid model or session", cli, req, c.Argv, err)
			}
		}
		if _, err := r.Command(runner.Request{Prompt: "p", Model: "gemini-2.5-flash", Session: "0199a-b2"}); err != nil {
			t.Errorf("%s: a plain model and session: %v", cli, err)
		}
	}
}
