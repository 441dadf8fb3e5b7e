package agentcli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// canary is the secret in the workspace's .env and config/credentials.json:
// it must never reach the model unless a person allowed the read.
const canary = "CANARY-ENV-7731"

// steps is a fake model's script for a run of several tool calls: step k is
// answered once the conversation holds k tool results (so a retry or a
// reason sent as a next message never shifts the plan), then final.
func steps(c cliCase, trigger string, calls []fakemodel.Answer, final string) fakemodel.Script {
	marker := map[string]string{"claude": `"type":"tool_result"`, "codex": `"type":"function_call_output"`, "gemini": `"functionResponse"`}[c.name]
	return func(a fakemodel.Ask) fakemodel.Answer {
		if !a.ToolCall && !strings.Contains(a.User, trigger) && !strings.Contains(string(a.Body), marker) {
			return fakemodel.Answer{Text: final}
		}
		if k := strings.Count(string(a.Body), marker); k < len(calls) {
			return calls[k]
		}
		return fakemodel.Answer{Text: final}
	}
}

// plantSecrets writes the secrets files the model asks for.
func plantSecrets(t *testing.T, dir string) {
	fakemodel.WriteFile(t, filepath.Join(dir, ".env"), "API_TOKEN="+canary+"\n")
	fakemodel.WriteFile(t, filepath.Join(dir, "config", "credentials.json"), `{"token":"`+canary+`"}`+"\n")
	fakemodel.WriteFile(t, filepath.Join(dir, "README.md"), "hello\n")
}

// plantAllowRules writes, for each CLI, what would make it run the secrets
// reads without asking: its own allow rules in the worktree (trusted, as a
// person who once ran the CLI there) and in the user's folder.
func plantAllowRules(t *testing.T, c cliCase, cli fakemodel.CLI) {
	switch c.name {
	case "claude":
		fakemodel.WriteFile(t, filepath.Join(cli.Home, ".claude", ".claude.json"), fmt.Sprintf(`{"projects":{%q:{"hasTrustDialogAccepted":true}}}`, cli.Dir))
		fakemodel.WriteFile(t, filepath.Join(cli.Dir, ".claude", "settings.json"), `{"permissions":{"allow":["Read","Bash","Bash(cat .env)","Bash(cat:*)"]}}`)
	case "codex":
		rules := "prefix_rule(pattern=[\"cat\"], decision=\"allow\")\n"
		fakemodel.WriteFile(t, filepath.Join(cli.Dir, ".codex", "rules", "default.rules"), rules)
		fakemodel.WriteFile(t, filepath.Join(cli.Home, ".codex", "rules", "default.rules"), rules)
	case "gemini":
		fakemodel.WriteFile(t, filepath.Join(cli.Home, ".gemini", "trustedFolders.json"), fmt.Sprintf(`{%q:"TRUST_FOLDER"}`, cli.Dir))
		fakemodel.WriteFile(t, filepath.Join(cli.Dir, ".gemini", "settings.json"), `{"tools":{"allowed":["run_shell_command","read_file","list_directory"]}}`)
		fakemodel.WriteFile(t, filepath.Join(cli.Home, ".gemini", "policies", "allow-all.toml"),
			"[[rule]]\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 999\n\n[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = \"[\\\\s\\\\S]*\"\ndecision = \"allow\"\npriority = 999\n")
	}
}

// runAnswering runs the setup's CLI with prompt, a person deciding every
// request it raises (verdict, reason) from another process as it appears.
func (s *setup) runAnswering(t *testing.T, c cliCase, prompt, verdict, reason string) (runner.Result, error) {
	t.Helper()
	return s.runWith(t, c, s.ses, prompt, true, func(r store.Request) {
		decideFromAnotherProcess(t, s.st.Path(), r.ID, verdict, reason)
	})
}

// audit is the session's audit log.
func (s *setup) audit(t *testing.T) []store.Event {
	evs, err := s.st.Audit(context.Background(), s.ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// outcomeOf is the audit event that says what the CLI did with the call
// a request (or a policy decision) was about: the event whose detail names
// its native call ID with one of the outcome actions.
func outcomeOf(evs []store.Event, nativeID string) (store.Event, bool) {
	for _, e := range evs {
		switch e.Action {
		case bridge.AuditRan, bridge.AuditRefused, bridge.AuditFailed, bridge.AuditRanUnasked:
			var d struct {
				NativeID string `json:"native_id"`
			}
			if json.Unmarshal(e.Detail, &d) == nil && d.NativeID == nativeID {
				return e, true
			}
		}
	}
	return store.Event{}, false
}

// Issue 27, High item 3: with no policy file, reading a secrets file — by
// the CLI's read tool and by `cat .env` — raises a request, even though
// the CLI's own rules (its defaults, and allow rules planted in a trusted
// worktree and in the user's folder) would run it without asking. The
// person rejects: the secret never reaches the model, and the audit log
// says for each call what was decided and what the CLI then did with it.
// Before: claude read .env and ran `cat .env` unasked, codex ran `cat .env`
// on the planted rules, gemini ran `cat .env` as a "known safe" command —
// the canary reached each fake model.
func TestEveryCallAsksWhateverTheCLIAllows(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		var calls []fakemodel.Answer
		var wantReqs []string // what each request names, in order
		var dir string
		var script atomic.Pointer[fakemodel.Script] // set once the worktree's paths are known
		s := newScriptedSetup(t, c, func(a fakemodel.Ask) fakemodel.Answer { return (*script.Load())(a) }, "", "")
		dir = s.cli.Dir
		plantSecrets(t, dir)
		plantAllowRules(t, c, s.cli)
		switch c.name {
		case "claude":
			calls = []fakemodel.Answer{
				{Call: &fakemodel.ToolCall{Name: "ToolSearch", Input: map[string]any{"query": "select:WebFetch"}}},
				{Call: &fakemodel.ToolCall{Name: "Read", Input: map[string]any{"file_path": filepath.Join(dir, ".env")}}},
				{Shell: "cat .env"},
			}
			wantReqs = []string{".env", "cat .env"}
		case "codex":
			calls = []fakemodel.Answer{{Shell: "cat .env"}}
			wantReqs = []string{"cat .env"}
		case "gemini":
			calls = []fakemodel.Answer{
				{Call: &fakemodel.ToolCall{Name: "read_file", Input: map[string]any{"file_path": filepath.Join(dir, "config", "credentials.json")}}},
				{Shell: "cat .env"},
			}
			wantReqs = []string{"credentials.json", "cat .env"}
		}
		plan := steps(c, "secrets", calls, "done")
		script.Store(&plan)
		res, err := s.runAnswering(t, c, "Please show me the secrets", "reject", "not-the-secrets")
		if err != nil {
			t.Fatalf("run: %v (%+v)", err, res)
		}
		if strings.Contains(s.allBodies(c.path), canary) {
			t.Errorf("the secret reached the model; requests: %+v", s.requests(t))
		}
		rs := s.requests(t)
		if len(rs) != len(wantReqs) {
			t.Fatalf("%d requests, want %d (%v): %+v; events %v", len(rs), len(wantReqs), wantReqs, rs, s.evs)
		}
		evs := s.audit(t)
		for _, e := range evs {
			t.Logf("audit: %s %s %s request %d %s", e.Actor, e.Surface, e.Action, e.RequestID, e.Detail)
		}
		for i, r := range rs {
			if r.Status != store.StatusRejected || !strings.Contains(r.File+" "+r.Command, wantReqs[i]) {
				t.Errorf("request %d: %+v, want a rejected request about %q", i, r, wantReqs[i])
			}
			o, ok := outcomeOf(evs, r.NativeID)
			if !ok || o.Action != bridge.AuditRefused || o.RequestID != r.ID {
				b, _ := json.Marshal(evs)
				t.Errorf("request %d (%s): the audit does not say the CLI refused it: %+v\n%s", i, r.NativeID, o, b)
			}
		}
		if c.name == "claude" { // ToolSearch touches nothing but claude's own state: answered at once
			found := false
			for _, e := range evs {
				found = found || (e.Action == bridge.AuditPolicyAllowed && strings.Contains(string(e.Detail), `"tool":"ToolSearch"`))
			}
			if !found {
				b, _ := json.Marshal(evs)
				t.Errorf("ToolSearch was not allowed by agentinfra itself: %s", b)
			}
		}
	})
}

// Issue 27, item 9: the audit log no longer records as allowed-and-done a
// call the CLI then did not carry out. The policy allows `touch
// missing/ok.txt`; no person is asked; the command fails (no such folder).
// The log has the policy's decision and then, for that same call, what the
// CLI reported: tool_failed, not tool_ran — except gemini, which reports a
// shell command that exited non-zero as `completed` and sends the client
// neither its output nor its exit status, so that is what the log can say.
// Before, the only record was `auto_approved`, whatever the CLI did next.
func TestAllowedThenFailedIsRecordedAsSuch(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		s := newScriptedSetup(t, c, fakemodel.ShellOnce("touch", "touch missing/ok.txt", "done"),
			"auto_approve:\n  commands: [\"touch *\"]\n", "commands: [\"touch *\"]\n")
		res, err := s.run(t, c, nil)
		if err != nil {
			t.Fatalf("run: %v (%+v)", err, res)
		}
		if rs := s.requests(t); len(rs) != 0 {
			t.Fatalf("a person was asked: %+v", rs)
		}
		evs := s.audit(t)
		for _, e := range evs {
			t.Logf("audit: %s %s %s request %d %s", e.Actor, e.Surface, e.Action, e.RequestID, e.Detail)
		}
		var id string
		for _, e := range evs {
			var d struct {
				NativeID string `json:"native_id"`
				Command  string `json:"command"`
			}
			json.Unmarshal(e.Detail, &d)
			if e.Action == bridge.AuditPolicyAllowed && strings.Contains(d.Command, "touch missing/ok.txt") {
				id = d.NativeID
			}
		}
		want := bridge.AuditFailed
		if c.name == "gemini" {
			want = bridge.AuditRan
		}
		if o, ok := outcomeOf(evs, id); id == "" || !ok || o.Action != want {
			t.Fatalf("the audit log does not say policy_allowed then %s (call %q, outcome %s %s)", want, id, o.Action, o.Detail)
		}
	})
}
